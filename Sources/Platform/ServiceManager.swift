// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// What a service tells systemd and how it finds out where its logs go, without libsystemd:
/// sd_notify(3)'s datagram to `$NOTIFY_SOCKET` and sd-daemon(3)'s `$JOURNAL_STREAM` check.
public enum ServiceManager {
    /// Whether `descriptor` is the journal's stream: `$JOURNAL_STREAM` is "DEVICE:INODE" (decimal)
    /// of the stream systemd connected stdout/stderr to, and the descriptor is still that stream
    /// (not a terminal or file it was redirected to later). Only then do `<N>` prefixes belong.
    public static func isJournalStream(_ descriptor: FileDescriptor, environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
              let actual = Syscalls.deviceAndInode(descriptor.rawValue) else { return false }
        return actual.device == device && actual.inode == inode
    }

    /// The notification socket from `$NOTIFY_SOCKET` (a path, or `@name` in the abstract
    /// namespace), or nil when the service manager does not listen (not started by systemd, or
    /// `NotifyAccess=none`).
    public static func notifySocket(environment: [String: String]) -> String? {
        guard let address = environment["NOTIFY_SOCKET"], address.hasPrefix("/") || address.hasPrefix("@") else { return nil }
        return address
    }

    /// Sends newline-separated `KEY=VALUE` assignments (`READY=1`, `STATUS=…`) in one datagram
    /// to `socket` (sd_notify(3)).
    public static func notify(_ assignments: [String], socket: String) throws(Errno) {
        try Syscalls.sendDatagram(Array(assignments.joined(separator: "\n").utf8), toUnixSocket: socket)
    }
}
