// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// The journal says a fact once a run and when it changes, not at every claim (issue 33).
@Suite struct JournalTests {
    @Test func gpsdAbsentIsWrittenOnceAcrossClaims() throws {
        let port = freePort()   // nobody listens there
        let q = try QibladHarness(arguments: ["--gpsd", "127.0.0.1:\(port)", "--sysfs-root", "/nonexistent"]); defer { q.stop() }
        try q.start()
        for round in 1...3 {
            let claim = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
            #expect(waitUntil(timeout: 10) { q.log.components(separatedBy: "first compass claim").count - 1 == round }, "\(q.log)")
            // The first attempt fails at once (connection refused); wait for its line, debug or not.
            #expect(waitUntil(timeout: 10) {
                q.log.components(separatedBy: "gpsd").count > 1 && q.log.components(separatedBy: "connect").count > round
            })
            claim.send(SIGINT)
            #expect(claim.wait(timeout: 10) == 0)
            #expect(waitUntil(timeout: 10) { q.log.components(separatedBy: "last compass claim released").count - 1 == round }, "\(q.log)")
        }
        let lines = q.log.split(separator: "\n")
        let warnings = lines.filter { !$0.hasPrefix("debug: ") && $0.contains("cannot connect to gpsd") }
        #expect(warnings.count == 1, "once a run, not at every claim: \(warnings)")
        #expect(warnings.first?.hasPrefix("warning: ") == true, "\(warnings)")
        let attempts = lines.filter { $0.hasPrefix("debug: ") && $0.contains("gpsd connect attempt failed") }
        #expect(attempts.count >= 2, "the later claims' attempts are at debug level: \(lines.filter { $0.contains("gpsd") })")
    }
}
