// SPDX-License-Identifier: Apache-2.0
// Issue 14: every source file says its licence in an SPDX header (https://spdx.dev/learn/handling-license-info/),
// so a packager's licence check (e.g. `reuse lint`, Debian's `licensecheck`) finds Apache-2.0 in
// each one, not only in LICENSE. Generated files get it from their generators.
import Foundation
import Testing
import TestSupport

@Suite struct LicenceHeaderTests {
    static let header = "SPDX-License-Identifier: Apache-2.0"

    /// Files under `folders` (relative to `base`, the repository by default) whose name ends in one
    /// of `suffixes` and whose first three lines do not carry ``header``.
    static func filesWithoutHeader(in folders: [String], suffixes: [String], base: URL = repositoryRoot) throws -> [String] {
        var missing: [String] = []
        for folder in folders {
            let root = base.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: root.path) else { continue }
            for case let relative as String in walker where suffixes.contains(where: relative.hasSuffix) {
                let text = try String(contentsOfFile: root.appendingPathComponent(relative).path, encoding: .utf8)
                let opening = text.split(separator: "\n", maxSplits: 3, omittingEmptySubsequences: false).prefix(3)
                if !opening.contains(where: { $0.contains(header) }) { missing.append(folder + "/" + relative) }
            }
        }
        return missing.sorted()
    }

    @Test func everySwiftFileCarriesTheHeader() throws {
        let missing = try Self.filesWithoutHeader(in: ["Sources", "Tests"], suffixes: [".swift"])
        #expect(missing.isEmpty, "no SPDX header:\n\(missing.joined(separator: "\n"))")
        let package = try String(contentsOfFile: repositoryRoot.appendingPathComponent("Package.swift").path, encoding: .utf8)
        #expect(package.split(separator: "\n").prefix(3).contains { $0.contains(Self.header) })
    }

    @Test func everyScriptCarriesTheHeader() throws {
        let missing = try Self.filesWithoutHeader(in: ["scripts", "examples"], suffixes: [".sh", ".py"])
        #expect(missing.isEmpty, "no SPDX header:\n\(missing.joined(separator: "\n"))")
    }

    @Test func theCheckSeesAFileWithoutTheHeader() throws {
        // Sanity: the walk reads real files, so an empty result above means something.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("spdx-\(UUID().uuidString)")
        let folder = base.appendingPathComponent("Sources")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        try "// no header\nlet x = 1\n".write(to: folder.appendingPathComponent("A.swift"), atomically: true, encoding: .utf8)
        try "// \(Self.header)\nlet y = 2\n".write(to: folder.appendingPathComponent("B.swift"), atomically: true, encoding: .utf8)
        #expect(try Self.filesWithoutHeader(in: ["Sources"], suffixes: [".swift"], base: base) == ["Sources/A.swift"])
    }
}
