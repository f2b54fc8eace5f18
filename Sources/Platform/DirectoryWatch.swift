// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// Names created in (or moved into) one directory, as they come: an `inotify(7)` descriptor
/// (`IN_NONBLOCK | IN_CLOEXEC`) with one watch for `IN_CREATE | IN_MOVED_TO`. The descriptor
/// becomes readable when a name came; an event loop polls it, so waiting costs no wakeup at all
/// (issue 37: what a retry timer cost every 30 s). Not for sysfs or procfs, which send no events.
public final class DirectoryWatch {
    public let directory: String
    public let fileDescriptor: FileDescriptor

    /// Throws the `Errno` of `inotify_init1(2)` or `inotify_add_watch(2)` (`ENOENT`: no such
    /// directory; `ENOSPC`: the user's watch limit).
    public init(directory: String) throws(Errno) {
        self.directory = directory
        fileDescriptor = FileDescriptor(rawValue: try Syscalls.watchDirectoryForNewNames(directory))
    }

    deinit { try? fileDescriptor.close() }

    /// The names that came since the last call (none when nothing did), and whether the watch has
    /// ended (the directory removed): no name will come after that.
    public func newNames() -> (names: [String], watchEnded: Bool) { Syscalls.readInotifyNames(fileDescriptor.rawValue) }
}
