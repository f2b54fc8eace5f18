// SPDX-License-Identifier: Apache-2.0
// The reference CSVs in Tests/Reference are copies of the project's shared reference folder
// (`../shared/reference/` beside the repository root). When that folder exists, the copies must be
// byte-identical; in a standalone clone there is nothing to compare and the check is skipped.
import Foundation
import Testing

@Suite("Reference data copies")
struct ReferenceDataTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let copies = repositoryRoot.appendingPathComponent("Tests/Reference")
    static let originals = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/reference")
    static var originalsPresent: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: originals.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func csvNames(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".csv") }.sorted()
    }

    @Test("Tests/Reference holds the reference CSVs")
    func copiesExist() throws {
        let names = try Self.csvNames(in: Self.copies)
        #expect(names.contains("wmm2025-testvalues.csv"))
        #expect(names.contains("qibla-cities.csv"))
    }

    @Test("Tests/Reference/*.csv are byte-identical to ../shared/reference (skipped when that folder is absent)",
          .enabled(if: ReferenceDataTests.originalsPresent, "../shared/reference not present beside the repository"))
    func copiesMatchOriginals() throws {
        let names = try Self.csvNames(in: Self.copies)
        for name in names {
            let copy = try Data(contentsOf: Self.copies.appendingPathComponent(name))
            let originalURL = Self.originals.appendingPathComponent(name)
            let original = try #require(try? Data(contentsOf: originalURL), "\(name) has no original in \(Self.originals.path)")
            #expect(copy == original, "Tests/Reference/\(name) differs from \(originalURL.path)")
        }
        let originalNames = try Self.csvNames(in: Self.originals)
        #expect(Set(originalNames).isSubset(of: Set(names)), "shared CSVs missing from Tests/Reference: \(Set(originalNames).subtracting(names))")
    }
}
