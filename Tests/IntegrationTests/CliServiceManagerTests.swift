// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// What qiblad tells its service manager and how its log lines look: `READY=1` and `STATUS=` lines
/// through `$NOTIFY_SOCKET` (a socket this test listens on), `<N>` prefixes only when stderr is
/// the journal's stream (`$JOURNAL_STREAM`).
@Suite struct CliServiceManagerTests {
    /// A datagram socket bound by python3, printing each datagram on one line ("\n" → "|").
    final class NotifyListener {
        let address: String
        let child: ChildProcess
        init(address: String) throws {
            self.address = address
            let script = """
            import socket, sys
            a = sys.argv[1]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind("\\0" + a[1:] if a.startswith("@") else a)
            print("listening", flush=True)
            while True:
                print(s.recv(4096).decode().replace("\\n", "|"), flush=True)
            """
            child = try ChildProcess("python3", ["-c", script, address])
            guard waitUntil(timeout: 10, { child.standardOutput.contains("listening") }) else {
                throw TestSupportError.startFailed("notify listener: \(child.standardError)")
            }
        }
        var datagrams: [String] { child.standardOutput.split(separator: "\n").dropFirst().map(String.init) }
        var statuses: [String] {
            datagrams.flatMap { $0.split(separator: "|") }.filter { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) }
        }
        deinit { child.terminate(grace: 1) }
    }

    @Test(arguments: [false, true])
    func readyOnceTheNameIsOwnedThenAStatusLinePerStateChange(abstract: Bool) throws {
        // The harness gives the bus and a state directory; qiblad is started here, with $NOTIFY_SOCKET.
        let q = try QibladHarness()
        let address = abstract ? "@qiblad-notify-test-\(ProcessInfo.processInfo.processIdentifier)"
                               : q.stateDirectory.path + "/notify"
        let listener = try NotifyListener(address: address)
        let daemon = try ChildProcess(
            product("qiblad").path,
            ["--session", "--state-dir", q.stateDirectory.path, "--config", q.stateDirectory.path + "/none.conf",
             "--no-gpsd", "--location", "-33.45,-70.66", "--sysfs-root", q.stateDirectory.path + "/no-sysfs"],
            environment: q.bus.environment.merging(["NOTIFY_SOCKET": address]) { $1 })
        defer { daemon.terminate() }
        #expect(waitUntil(timeout: 15) { listener.datagrams.contains { $0.contains("READY=1") } }, "\(daemon.standardError)")
        #expect(try q.nameHasOwner(), "READY=1 comes after the name is owned")
        #expect(listener.statuses.first == "idle; position from manual", "\(listener.datagrams)")

        // A claim held by `qiblactl monitor` with no magnetometer, then its end: two changes, two lines.
        let monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
        #expect(waitUntil(timeout: 10) { listener.statuses.last == "no compass; position from manual" }, "\(listener.datagrams)")
        monitor.terminate()
        #expect(waitUntil(timeout: 10) { listener.statuses.last == "idle; position from manual" }, "\(listener.datagrams)")
        // Property reads change no state: no new line.
        let count = listener.datagrams.count
        for _ in 0..<3 { _ = try q.string("LocationSource") }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(listener.datagrams.count == count)
        // Never the same status twice in a row, and no watchdog pings.
        let statuses = listener.statuses
        #expect(zip(statuses, statuses.dropFirst()).allSatisfy { $0 != $1 }, "\(statuses)")
        #expect(!listener.child.standardOutput.contains("WATCHDOG"))
    }

    /// qiblad with no bus to reach: one info line (no configuration file) and one critical line, then exit 1.
    func runWithoutABus(journal: String?) throws -> String {
        let temporary = try TemporaryDirectory(prefix: "qiblad-log"); defer { temporary.remove() }
        let qiblad = product("qiblad").path
        let command: String
        switch journal {
        case "match"?:
            // The device and inode of the very pipe qiblad's stderr is (stat inherits it as fd 2).
            command = "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$0\" --config \"$1\" --state-dir \"$2\""
        case let other?:
            command = "JOURNAL_STREAM=\(other) exec \"$0\" --config \"$1\" --state-dir \"$2\""
        case nil:
            command = "unset JOURNAL_STREAM; exec \"$0\" --config \"$1\" --state-dir \"$2\""
        }
        let r = try run("/bin/sh", ["-c", command, qiblad, temporary.path + "/none.conf", temporary.path],
                        environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(temporary.path)/no-bus"])
        #expect(r.status == 1, "\(r.stderr)")
        return r.stderr
    }

    @Test func logLinesCarryPrioritiesOnlyWhenStderrIsTheJournal() throws {
        let journal = try runWithoutABus(journal: "match")
        #expect(journal.contains("<6>no configuration file"), "\(journal)")
        #expect(journal.contains("<2>cannot connect to the session bus"), "\(journal)")

        for other in [nil, "1:2", "garbage"] {
            let plain = try runWithoutABus(journal: other)
            #expect(!plain.contains("<6>") && !plain.contains("<2>"), "\(other ?? "unset"): \(plain)")
            #expect(plain.contains("\nno configuration file") || plain.hasPrefix("no configuration file"), "\(plain)")
            #expect(plain.contains("critical: cannot connect to the session bus"), "\(plain)")
        }
    }
}
