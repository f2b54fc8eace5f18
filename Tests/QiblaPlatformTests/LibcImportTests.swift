// SPDX-License-Identifier: Apache-2.0
// Keeps the platform layer honest (issue 9): only Sources/Platform/ may import the C library by
// name. The musl build (postmarketOS) cannot run here, so this is the check that a `Glibc.` call
// has not crept back into an adapter or executable.
import Foundation
import Testing
import TestSupport

@Suite struct LibcImportTests {
    /// One forbidden line: where and what.
    struct Finding: CustomStringConvertible {
        var path: String
        var line: Int
        var text: String
        var description: String { "\(path):\(line): \(text)" }
    }

    /// `import Glibc`, `import Musl`, `import Darwin` (also scoped, `import func Glibc.sin`, and
    /// `@_exported`) and `canImport(Glibc)` / `canImport(Musl)`.
    static let forbidden = try! NSRegularExpression(
        pattern: #"^\s*(@_exported\s+)?import\s+((struct|func|var|let|class|enum|typealias|protocol)\s+)?(Glibc|Musl|Darwin)\b|canImport\(\s*(Glibc|Musl)\s*\)"#)

    /// Every forbidden line in `Sources/**/*.swift` outside `Sources/Platform/`.
    static func findings() throws -> [Finding] {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { return [] }
        var result: [Finding] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") && !relative.hasPrefix("Platform/") {
            let text = try String(contentsOfFile: sources.appendingPathComponent(relative).path, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let string = String(line)
                let range = NSRange(string.startIndex..., in: string)
                if forbidden.firstMatch(in: string, range: range) != nil {
                    result.append(Finding(path: "Sources/" + relative, line: index + 1,
                                          text: string.trimmingCharacters(in: .whitespaces)))
                }
            }
        }
        return result.sorted { ($0.path, $0.line) < ($1.path, $1.line) }
    }

    @Test func theScannerSeesTheOneAllowedSite() throws {
        // Sanity: the pattern matches the platform layer's own import site, so a pass below means something.
        let site = repositoryRoot.appendingPathComponent("Sources/Platform/Internals/Syscalls.swift").path
        let text = try String(contentsOfFile: site, encoding: .utf8)
        let hits = text.split(separator: "\n").filter {
            let s = String($0)
            return Self.forbidden.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        }
        #expect(hits.count >= 4, "\(hits)")
    }

    @Test func nothingOutsideThePlatformLayerImportsTheCLibrary() throws {
        let all = try Self.findings()
        #expect(all.isEmpty, "libc imported outside Sources/Platform/:\n\(all.map(\.description).joined(separator: "\n"))")
    }
}
