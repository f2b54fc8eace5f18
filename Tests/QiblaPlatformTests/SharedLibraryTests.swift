// SPDX-License-Identifier: Apache-2.0
import QiblaPlatform
import Testing

/// Libraries loaded at run time (qiblactl's libgeonames) and gettext for another domain.
@Suite struct SharedLibraryTests {
    @Test func aLibraryAndItsSymbol() throws {
        let libm = try SharedLibrary("libm.so.6")
        typealias Cosine = @convention(c) (Double) -> Double
        let cosine = unsafeBitCast(try libm.symbol("cos"), to: Cosine.self)
        #expect(cosine(0) == 1)
    }

    @Test func whatCannotBeLoadedSaysWhy() {
        #expect(throws: SharedLibrary.LoadError.self) { try SharedLibrary("libqiblad-no-such-library.so.9") }
        // The error itself through do/catch: Swift 6.0's swift-testing (Debian trixie) returns no
        // value from #require(throws:).
        var failure: (any Error)?
        do { _ = try SharedLibrary("libqiblad-no-such-library.so.9") } catch { failure = error }
        let text = failure.map { String(describing: $0) } ?? "no error"
        #expect(text.contains("libqiblad-no-such-library.so.9"), "\(text)")
        #expect(throws: SharedLibrary.LoadError.self) { try SharedLibrary("libm.so.6").symbol("qiblad_no_such_symbol") }
    }

    /// A domain without a catalogue for the language: no translation, no header.
    @Test func aDomainWithoutACatalogue() {
        #expect(Gettext.translation("Where are you?", domain: "qiblad-no-such-domain") == nil)
        #expect(!Gettext.hasCatalogue("qiblad-no-such-domain"))
    }
}
