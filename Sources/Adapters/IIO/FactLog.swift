// SPDX-License-Identifier: Apache-2.0
import Logging
import Synchronization

/// Facts about the hardware (which device was found, its mount matrix, how it is read), logged at
/// `info` the first time they are seen in a run and whenever they change, at `debug` when they
/// repeat: every claim restarts the sensors and discovers them again, and a client that claims on
/// every screen-on must not fill the journal with the same ten lines.
final class FactLog: Sendable {
    private let facts = Mutex<[String: String]>([:])

    /// The process's log of facts (one daemon run).
    static let shared = FactLog()

    /// Logs `message` under `topic` (e.g. "magnetometer", "iio:device1 mount matrix").
    func note(_ topic: String, _ message: String, to logger: Logger) {
        let changed = facts.withLock { facts in
            defer { facts[topic] = message }
            return facts[topic] != message
        }
        if changed { logger.info("\(message)") } else { logger.debug("\(message)") }
    }
}
