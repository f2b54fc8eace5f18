// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// `examples/qibla-widget.py`, a widget in another language (Python, Gio's DBusProxy), run
/// against the real qiblad. Needs PyGObject: `apt-get install python3-gi`.
@Suite struct ExampleWidgetTests {
    /// Debian's python3, where python3-gi installs `gi` (a pyenv or venv python3 first on the
    /// PATH would not see it).
    static let python = "/usr/bin/python3"
    static let hasGi: Bool = (try? run(python, ["-c", "from gi.repository import Gio"]))?.status == 0

    @Test(.enabled(if: hasGi, "skipped: Python's gi is missing (apt-get install python3-gi)"))
    func pythonGioWidgetClaimsTheCompassAndPrintsAHeading() throws {
        let rig = try QiblactlWidgetTests.rig()
        let q = rig.daemon
        let script = repositoryRoot.appendingPathComponent("examples/qibla-widget.py").path
        let r = try run(Self.python, [script, "--seconds", "6"], environment: q.bus.environment, timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        // The first line is the state before the claim; the claim makes the heading live.
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Qibla 118.99° · heading unknown") == true, "\(r.stdout)")
        let heading = try #require(lines.compactMap { line -> Double? in
            guard let range = line.range(of: #"heading \d+\.\d°"#, options: .regularExpression) else { return nil }
            return Double(line[range].dropFirst("heading ".count).dropLast())
        }.last, "no heading: \(r.stdout)\n\(r.stderr)")
        #expect(abs(heading - 30) < 10, "\(heading)")
        #expect(r.stdout.contains("turn right"), "\(r.stdout)")
        #expect(waitUntil(timeout: 10) { q.log.contains("last compass claim released") }, "\(q.log)")
    }
}
