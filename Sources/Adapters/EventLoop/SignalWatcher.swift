#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import SystemPackage

/// Delivers POSIX signals (SIGTERM, SIGINT, SIGHUP) to the event loop through `signalfd(2)`,
/// so handlers run as ordinary loop callbacks — no async-signal-safety traps.
/// The signals are blocked for the whole process; create it before starting any thread.
public final class SignalWatcher {
    private let fd: Int32
    private var token: EventLoop.Token?

    public init(signals: [Int32]) throws(Errno) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for s in signals { sigaddset(&mask, s) }
        guard pthread_sigmask(SIG_BLOCK, &mask, nil) == 0 else { throw Errno(rawValue: errno) }
        let fd = signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        self.fd = fd
    }

    /// Calls `handler` with the signal number for each delivered signal.
    public func attach(to loop: EventLoop, _ handler: @escaping (Int32) -> Void) {
        token = loop.watch(FileDescriptor(rawValue: fd)) { [fd] _ in
            var info = signalfd_siginfo()
            while withUnsafeMutableBytes(of: &info, { read(fd, $0.baseAddress, $0.count) }) == MemoryLayout<signalfd_siginfo>.size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    deinit { close(fd) }
}
