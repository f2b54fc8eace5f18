// SPDX-License-Identifier: Apache-2.0
import Logging
import QiblaDaemon
import QiblaPlatform

/// Tells systemd what qiblad is doing through `$NOTIFY_SOCKET` (sd_notify(3), no libsystemd):
/// `READY=1` once the bus name is owned, `STATUS=…` when the status line changes. No watchdog:
/// qiblad must not wake up while nobody needs it. Without `$NOTIFY_SOCKET` it does nothing.
final class ServiceNotifier {
    private let socket: String?
    private let logger: Logger
    private var lastStatus: String?
    /// What ``lastStatus`` was built from, when it came from ``update(summary:)``.
    private var lastSummary: ServiceStatus.Summary?
    private var failed = false

    init(environment: [String: String], logger: Logger) {
        socket = ServiceManager.notifySocket(environment: environment)
        self.logger = logger
    }

    /// `READY=1`, with the status when it differs from the last one sent.
    func ready(status: String) {
        lastSummary = nil
        var assignments = ["READY=1"]
        if status != lastStatus { assignments.append("STATUS=\(status)") }
        lastStatus = status
        send(assignments)
    }

    /// `STATUS=…`, only when it differs from the last one sent.
    func update(status: String) {
        lastSummary = nil
        guard status != lastStatus else { return }
        lastStatus = status
        send(["STATUS=\(status)"])
    }

    /// `STATUS=…` from what it is made of: the text is built (allocating) only when `summary`
    /// differs from the last one, not on every publish.
    func update(summary: ServiceStatus.Summary) {
        guard summary != lastSummary else { return }
        update(status: summary.text)
        lastSummary = summary
    }

    private func send(_ assignments: [String]) {
        guard let socket else { return }
        do {
            try ServiceManager.notify(assignments, socket: socket)
        } catch {
            // Logged once: the service manager is gone or refuses; the daemon goes on without it.
            if !failed { logger.warning("cannot notify the service manager at \(socket): \(error)") }
            failed = true
        }
    }
}
