// SPDX-License-Identifier: Apache-2.0
// The one file of the whole project that imports the C library (glibc on Debian, musl on
// postmarketOS/Alpine) and the one place where QiblaPlatform handles raw pointers. Every function
// here is a thin call of one C function (man-page section in the doc), retrying `EINTR` where a
// retry is correct, and reporting failure as `Errno`. The typed API lives in the other files of
// this folder; nothing outside `Sources/Platform/` imports Glibc or Musl (LibcImportTests checks).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("QiblaPlatform supports Linux with glibc or musl")
#endif
import CLinux
import SystemPackage

enum Syscalls {
    /// `localtime_r(3)`: the broken-down local time (the C library's zone: TZ or /etc/localtime).
    static func localTime(_ unixSeconds: Int) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int,
                                                  utcOffsetSeconds: Int) {
        var seconds = time_t(unixSeconds)
        var t = tm()
        localtime_r(&seconds, &t)
        return (Int(t.tm_year) + 1900, Int(t.tm_mon) + 1, Int(t.tm_mday), Int(t.tm_hour), Int(t.tm_min), Int(t.tm_sec),
                Int(t.tm_gmtoff))
    }

    /// `mktime(3)` of a local date and time (DST decided by the C library); nil when it fails.
    static func makeLocalTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month - 1)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        t.tm_isdst = -1
        let seconds = mktime(&t)
        return seconds == -1 ? nil : Int(seconds)
    }

    /// glibc `mallinfo2(3)`: bytes allocated on the heap; nil where the C library has no such call.
    static func heapBytesInUse() -> Int? {
        let bytes = qiblad_heap_bytes_in_use()
        return bytes >= 0 ? Int(bytes) : nil
    }

    /// The calling thread's C `errno`.
    static var lastError: Errno {
        get { Errno(rawValue: errno) }
        set { errno = newValue.rawValue }
    }

    /// Runs `body` until it does not fail with `EINTR`; a negative result becomes `errno`.
    @inline(__always)
    static func retrying<R: BinaryInteger>(_ body: () -> R) throws(Errno) -> R {
        while true {
            let result = body()
            if result >= 0 { return result }
            let error = lastError
            if error != .interrupted { throw error }
        }
    }

    /// Like ``retrying(_:)`` for calls that return the error number instead of setting `errno`
    /// (`posix_spawn`, `pthread_*`).
    static func checkingReturnedError(_ result: Int32) throws(Errno) {
        if result != 0 { throw Errno(rawValue: result) }
    }

    // MARK: Clocks (clock_gettime(2), nanosleep(2), gmtime_r(3))

    static func clockNanoseconds(realtime: Bool) -> Int64 {
        var now = timespec()
        clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    static func sleep(nanoseconds: Int64) {
        guard nanoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, lastError == .interrupted { request = remaining }
    }

    /// (year, month 1–12, day, hour, minute, second) in UTC.
    static func utcComponents(unixSeconds: Int64) -> (Int, Int, Int, Int, Int, Int) {
        var seconds = time_t(unixSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    // MARK: poll(2)

    typealias PollEntry = pollfd
    static let pollIn = Int16(POLLIN), pollOut = Int16(POLLOUT), pollError = Int16(POLLERR)
    static let pollHangup = Int16(POLLHUP), pollInvalid = Int16(POLLNVAL)

    static func pollEntry(_ fd: Int32, events: Int16) -> pollfd { pollfd(fd: fd, events: events, revents: 0) }
    static func returnedEvents(_ entry: pollfd) -> Int16 { entry.revents }
    static func clearReturnedEvents(_ entries: inout [pollfd]) {
        for index in entries.indices { entries[index].revents = 0 }
    }

    /// `poll(2)` on one descriptor, its `pollfd` on the stack (allocates nothing); retries `EINTR`.
    /// Returns the returned events.
    static func pollOne(_ fd: Int32, events: Int16, milliseconds: Int32) throws(Errno) -> Int16 {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        _ = try retrying { poll(&entry, 1, milliseconds) }
        return entry.revents
    }

    /// `poll(2)`, retrying on `EINTR` with the same timeout; -1 milliseconds waits forever.
    static func pollRetrying(_ entries: inout [pollfd], milliseconds: Int32) throws(Errno) -> Int {
        let count = nfds_t(entries.count)
        return Int(try retrying { entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, count, milliseconds) } })
    }

    // MARK: futex(2)

    /// A 32-bit word at a fixed address that one thread sleeps on (`FUTEX_WAIT_BITSET`, an absolute
    /// `CLOCK_MONOTONIC` deadline) and others change and wake (`FUTEX_WAKE`): a stop-aware sleep
    /// with no descriptor and no `poll` set, one system call per sleep.
    final class FutexWord: @unchecked Sendable {
        private let word: UnsafeMutablePointer<UInt32>

        init(_ value: UInt32 = 0) {
            word = .allocate(capacity: 1)
            word.initialize(to: value)
        }

        deinit { word.deallocate() }

        /// The value (acquire).
        var value: UInt32 { qiblad_word_load(word) }

        /// Sets the value (release) and wakes every waiter.
        func storeAndWake(_ value: UInt32) {
            qiblad_word_store(word, value)
            qiblad_futex_wake_all(word)
        }

        /// Sleeps while the value is `expected`, until woken or the `CLOCK_MONOTONIC` time `deadline`
        /// (nanoseconds; `Int64.max`: no deadline). Returns false when the deadline passed, true when
        /// woken, interrupted or the value was not `expected`: the caller checks what it waits for and
        /// calls again.
        func wait(whileEquals expected: UInt32, untilMonotonicNanoseconds deadline: Int64) -> Bool {
            switch qiblad_futex_wait_until(word, expected, deadline == .max ? -1 : deadline) {
            case 0, EAGAIN, EINTR:
                return true
            case ETIMEDOUT:
                return false
            default:
                // A refused futex (a seccomp filter, say): sleep out the time plainly rather than spin.
                Syscalls.sleep(nanoseconds: deadline - Syscalls.clockNanoseconds(realtime: false))
                return false
            }
        }
    }

    // MARK: inotify(7)

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)` with one watch on `directory` for names created or
    /// moved into it (`IN_CREATE | IN_MOVED_TO`, `IN_ONLYDIR`).
    static func watchDirectoryForNewNames(_ directory: String) throws(Errno) -> Int32 {
        let fd = try retrying { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        let mask = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            let error = lastError
            _ = close(fd)
            throw error
        }
        return fd
    }

    /// `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)` watching what may remove `file`: `directory` losing
    /// a name or going (`IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF`), `file` going
    /// (`IN_DELETE_SELF | IN_MOVE_SELF`, and `IN_ATTRIB`, which an unlink sends), and every
    /// directory above `file`'s real path (`realpath(3)`) going (`IN_DELETE_SELF | IN_MOVE_SELF`:
    /// a link that would dangle). Only what removes something sends an event. -1 when `file` or
    /// `directory` cannot be watched.
    static func watchForRemoval(directory: String, file: String) -> Int32 {
        guard let resolved = realpath(file, nil) else { return -1 }
        let real = String(cString: resolved)
        free(resolved)
        guard let fd = try? retrying({ inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }) else { return -1 }
        let gone = UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
        guard inotify_add_watch(fd, directory, UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM) | gone) >= 0,
              inotify_add_watch(fd, file, gone | UInt32(IN_ATTRIB)) >= 0 else {
            _ = close(fd)
            return -1
        }
        var ancestor = Substring(real)
        while let slash = ancestor.lastIndex(of: "/"), slash > ancestor.startIndex {
            ancestor = ancestor[..<slash]
            _ = inotify_add_watch(fd, String(ancestor), gone)
        }
        return fd
    }

    /// Whether `fd` is readable now (`poll(2)` with a zero timeout).
    static func hasInput(_ fd: Int32) -> Bool {
        ((try? pollOne(fd, events: Int16(POLLIN), milliseconds: 0)) ?? 0) & Int16(POLLIN) != 0
    }

    /// Reads every pending `struct inotify_event` of a non-blocking inotify descriptor, calling
    /// `body` with each event's mask and its name's bytes (empty for an event without a name, such
    /// as `IN_IGNORED`; the name's trailing NULs removed). One stack buffer of 4 KiB, which holds
    /// at least one event with the longest name (`NAME_MAX`).
    private static func forEachInotifyEvent(_ fd: Int32, _ body: (_ mask: UInt32, _ name: UnsafeRawBufferPointer) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            let header = MemoryLayout<inotify_event>.size
            while case .success(let count) = readBytes(fd, into: buffer), count > 0 {
                var offset = 0
                while offset + header <= count {
                    let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    let length = min(Int(event.len), count - offset - header)
                    let name = UnsafeRawBufferPointer(rebasing: buffer[(offset + header)..<(offset + header + length)])
                    body(event.mask, UnsafeRawBufferPointer(rebasing: name[..<(name.firstIndex(of: 0) ?? name.count)]))
                    offset += header + Int(event.len)
                }
            }
        }
    }

    /// Reads and discards every pending event of an inotify descriptor: whether any came, and
    /// whether a watch ended (`IN_IGNORED`).
    static func drainInotifyEvents(_ fd: Int32) -> (came: Bool, watchEnded: Bool) {
        var came = false
        var ended = false
        forEachInotifyEvent(fd) { mask, _ in
            came = true
            if mask & UInt32(IN_IGNORED) != 0 { ended = true }
        }
        return (came, ended)
    }

    /// Reads every pending event of `fd`: the names they carry (an event without a name, such as
    /// `IN_IGNORED`, gives none), and whether the watch ended (`IN_IGNORED`: the directory was
    /// removed or its file system unmounted).
    static func readInotifyNames(_ fd: Int32) -> (names: [String], watchEnded: Bool) {
        var names: [String] = []
        var ended = false
        forEachInotifyEvent(fd) { mask, name in
            if mask & UInt32(IN_IGNORED) != 0 { ended = true }
            if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
        }
        return (names, ended)
    }

    // MARK: eventfd(2), timerfd_create(2), signalfd(2)

    static func makeEventFD() throws(Errno) -> Int32 {
        try retrying { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    /// Writes or reads the 8-byte counter of an eventfd or timerfd; `nil` when nothing was there (`EAGAIN`).
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    static func writeCounter(_ fd: Int32, _ value: UInt64) {
        var value = value
        _ = try? retrying { withUnsafeBytes(of: &value) { write(fd, $0.baseAddress, 8) } }
    }

    static func readBytes(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return .success(count) }
            let error = lastError
            if error != .interrupted { return .failure(error) }
        }
    }

    static func readCounter(_ fd: Int32) -> UInt64? {
        var value: UInt64 = 0
        guard let n = try? retrying({ withUnsafeMutableBytes(of: &value) { read(fd, $0.baseAddress, 8) } }), n == 8
        else { return nil }
        return value
    }

    static func makeTimerFD(monotonic: Bool) throws(Errno) -> Int32 {
        try retrying { timerfd_create(monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC)) }
    }

    static func timerfdSet(_ fd: Int32, firstNanoseconds: Int64, intervalNanoseconds: Int64) throws(Errno) {
        func spec(_ ns: Int64) -> timespec { timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000)) }
        var value = itimerspec(it_interval: spec(intervalNanoseconds), it_value: spec(firstNanoseconds))
        _ = try retrying { timerfd_settime(fd, 0, &value, nil) }
    }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// `pthread_sigmask(SIG_BLOCK)` for the calling thread (threads started later inherit it).
    static func block(_ signals: [Int32]) throws(Errno) {
        var set = signalSet(signals)
        try checkingReturnedError(pthread_sigmask(SIG_BLOCK, &set, nil))
    }

    static func makeSignalFD(_ signals: [Int32]) throws(Errno) -> Int32 {
        var set = signalSet(signals)
        return try retrying { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// One `signalfd_siginfo` from a non-blocking signalfd: the signal number, or nil when none is queued.
    static func readSignal(_ fd: Int32) -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        guard let n = try? retrying({ withUnsafeMutableBytes(of: &info) { read(fd, $0.baseAddress, size) } }), n == size
        else { return nil }
        return Int32(info.ssi_signo)
    }

    /// Runs `body` with `signal` blocked on this thread and discards one instance of it that `body`
    /// raised and left pending (the POSIX recipe for SIGPIPE-free writes: sigpending + sigtimedwait).
    static func withSignalSuppressed<T>(_ signal: Int32, _ body: () -> T) -> T {
        var only = signalSet([signal])
        var previous = sigset_t()
        var pending = sigset_t()
        sigpending(&pending)
        let wasPending = sigismember(&pending, signal) == 1
        pthread_sigmask(SIG_BLOCK, &only, &previous)
        let result = body()
        sigpending(&pending)
        if !wasPending, sigismember(&pending, signal) == 1 {
            var zero = timespec()
            _ = sigtimedwait(&only, nil, &zero)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
    }

    static func sendSignal(_ pid: Int32, _ signal: Int32) throws(Errno) {
        _ = try retrying { kill(pid, signal) }
    }

    static func processID() -> Int32 { getpid() }

    /// The real user id, `getuid(2)`.
    static func userID() -> UInt32 { getuid() }

    /// The calling thread's `pthread_self(3)`, compared with `pthread_equal(3)`.
    struct ThreadHandle: @unchecked Sendable, Equatable {  // pthread_t: an integer (glibc) or a pointer (musl)
        let raw: pthread_t
        static func == (a: ThreadHandle, b: ThreadHandle) -> Bool { pthread_equal(a.raw, b.raw) != 0 }
    }

    static func currentThread() -> ThreadHandle { ThreadHandle(raw: pthread_self()) }

    static let signalNumbers = (hangup: SIGHUP, interrupt: SIGINT, kill: SIGKILL, pipe: SIGPIPE,
                                terminate: SIGTERM, child: SIGCHLD, user1: SIGUSR1)

    // MARK: Threads (pthread_create(3), pthread_detach(3))

    private final class ThreadStart {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new detached POSIX thread (the default stack size, the caller's signal mask).
    static func startDetachedThread(_ body: @escaping () -> Void) throws(Errno) {
        let context = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<ThreadStart>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw Errno(rawValue: result)
        }
        pthread_detach(handle)
    }

    // MARK: Memory (madvise(2))

    /// `madvise(MADV_DONTNEED)` on `[start, end)`: drops this process's page-table entries for the
    /// range. For a read-only file mapping the next touch maps the page again from the page cache.
    static func adviseNotNeeded(start: UInt, end: UInt) -> Bool {
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return false }
        return madvise(address, Int(end - start), MADV_DONTNEED) == 0
    }

    /// `sysconf(_SC_PAGESIZE)`: the page size, bytes (4096 when it fails).
    static func pageSize() -> Int {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }

    /// glibc `malloc_trim(0)`: gives the free pages inside every malloc arena back to the kernel
    /// (`madvise(MADV_DONTNEED)`), not only the top of the main heap. False where the C library has
    /// no such call (musl) or nothing was released.
    static func trimHeap() -> Bool { qiblad_malloc_trim() == 1 }

    /// glibc `mallopt(M_MMAP_THRESHOLD)` and `mallopt(M_TRIM_THRESHOLD)`; false where the C library
    /// has no such call (musl) or refused a value.
    static func setHeapThresholds(mmapBytes: Int32, trimBytes: Int32) -> Bool {
        qiblad_malloc_set_thresholds(mmapBytes, trimBytes) == 1
    }

    // MARK: Files (mkdir(2), rename(2), unlink(2), rmdir(2), fsync(2), access(2), lstat(2), opendir(3), mkdtemp(3), mkfifo(3), readlink(2))

    static func makeDirectory(_ path: String, mode: UInt32) throws(Errno) {
        _ = try retrying { mkdir(path, mode_t(mode)) }
    }

    static func renameItem(_ from: String, _ to: String) throws(Errno) {
        _ = try retrying { rename(from, to) }
    }

    static func unlinkFile(_ path: String) throws(Errno) {
        _ = try retrying { unlink(path) }
    }

    static func removeDirectory(_ path: String) throws(Errno) {
        _ = try retrying { rmdir(path) }
    }

    static func syncFile(_ fd: Int32) throws(Errno) {
        _ = try retrying { fsync(fd) }
    }

    /// `stat(2)` (links followed): device, inode, size in bytes, modification time in nanoseconds.
    static func fileStatus(_ path: String) throws(Errno) -> (device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64) {
        var info = stat()
        _ = try retrying { path.withCString { stat($0, &info) } }
        return (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size),
                Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }

    static func isAccessible(_ path: String, writable: Bool) -> Bool {
        // `withCString` lends a native string's own bytes; passing the String straight to the C
        // function would copy it into a new heap array on every call (presence checks, 1 /s).
        path.withCString { access($0, writable ? W_OK : F_OK) == 0 }
    }

    /// Whether `path` is a directory itself (not a link to one).
    static func isDirectoryNotFollowingLinks(_ path: String) throws(Errno) -> Bool {
        var info = stat()
        _ = try retrying { lstat(path, &info) }
        return info.st_mode & S_IFMT == S_IFDIR
    }

    /// `open(2)` of a directory with `O_PATH`: a handle to look names up in, nothing read; -1 on failure.
    static func openDirectoryForLookups(_ path: String) -> Int32 {
        path.withCString { qiblad_open_directory_for_lookups($0) }
    }

    /// `faccessat(2)` `F_OK` of `path` relative to the directory `directory` (effective IDs: no
    /// credentials switched for the call).
    static func exists(_ path: String, relativeTo directory: Int32) -> Bool {
        path.withCString { faccessat(directory, $0, F_OK, AT_EACCESS) == 0 }
    }

    /// `close(2)` of a descriptor this process owns alone (errors ignored: nothing to do about them).
    static func closeIgnoringErrors(_ descriptor: Int32) { _ = close(descriptor) }

    static func existsNotFollowingLinks(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func listDirectory(_ path: String) throws(Errno) -> [String] {
        guard let handle = opendir(path) else { throw lastError }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeTemporaryDirectory(_ template: String) throws(Errno) -> String {
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw lastError }
        return String(cString: made)
    }

    static func makeFIFO(_ path: String, mode: UInt32) throws(Errno) {
        _ = try retrying { mkfifo(path, mode_t(mode)) }
    }

    static func readSymbolicLink(_ path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = try retrying { readlink(path, &buffer, buffer.count - 1) }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func setNonBlocking(_ fd: Int32) throws(Errno) {
        let flags = try retrying { fcntl(fd, F_GETFL) }
        _ = try retrying { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    // MARK: Environment (environ(7), setenv(3), unsetenv(3))

    static func environmentVariables() -> [String: String] {
        var result: [String: String] = [:]
        guard var pointer = environ as UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? else { return result }
        while let entry = pointer.pointee {
            let pair = String(cString: entry)
            if let equals = pair.firstIndex(of: "=") {
                result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    static func environmentVariable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    static func setEnvironmentVariable(_ name: String, _ value: String) throws(Errno) {
        _ = try retrying { setenv(name, value, 1) }
    }

    static func unsetEnvironmentVariable(_ name: String) throws(Errno) {
        _ = try retrying { unsetenv(name) }
    }

    // MARK: Processes (posix_spawnp(3), waitpid(2))

    /// `posix_spawnp` with an empty signal mask and default dispositions for `defaultSignals`, so a
    /// child of a process that blocks signals (for signalfd) still obeys SIGTERM. `environment` is
    /// the child's whole environment; `standardOutput`/`standardError` redirect to files when set.
    static func spawn(_ arguments: [String], environment: [String: String], standardOutput: String?,
                      standardError: String?, defaultSignals: [Int32]) throws(Errno) -> Int32 {
        precondition(!arguments.isEmpty, "spawn needs the program name")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = signalSet([])
        var defaults = signalSet(defaultSignals)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let flags = O_WRONLY | O_CREAT | O_TRUNC  // no O_CLOEXEC: the file is opened as fd 1 or 2 of the child itself
        if let standardOutput { posix_spawn_file_actions_addopen(&actions, 1, standardOutput, flags, 0o600) }
        if let standardError { posix_spawn_file_actions_addopen(&actions, 2, standardError, flags, 0o600) }

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let result = argv.withUnsafeBufferPointer { argvBuffer in
            envp.withUnsafeBufferPointer { envpBuffer in
                posix_spawnp(&pid, arguments[0], &actions, &attributes,
                             argvBuffer.baseAddress!, envpBuffer.baseAddress!)
            }
        }
        try checkingReturnedError(result)
        return pid
    }

    /// `waitpid(pid, &status, blocking ? 0 : WNOHANG)`: the raw status, or nil if still running.
    static func waitForProcess(_ pid: Int32, blocking: Bool) throws(Errno) -> Int32? {
        var status: Int32 = 0
        let result = try retrying { waitpid(pid, &status, blocking ? 0 : WNOHANG) }
        return result == 0 ? nil : status
    }

    // MARK: Service manager (fstat(2) for $JOURNAL_STREAM, a datagram for $NOTIFY_SOCKET)

    /// `fstat(fd)`: the device and inode numbers, or nil when the descriptor is not open.
    static func deviceAndInode(_ fd: Int32) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    // MARK: IIO events (include/uapi/linux/iio/events.h)

    /// `ioctl(IIO_GET_EVENT_FD_IOCTL)` on an open IIO character device: the event descriptor.
    static func iioEventDescriptor(_ fd: Int32) throws(Errno) -> Int32 {
        let result = qiblad_iio_event_fd(fd)
        guard result >= 0 else { throw Errno(rawValue: -result) }
        return result
    }

    /// `fstat(2)`: whether the descriptor is a character device (`S_ISCHR`), a FIFO (`S_ISFIFO`).
    static func fileKind(_ fd: Int32) -> (isCharacterDevice: Bool, isFIFO: Bool)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return ((info.st_mode & S_IFMT) == S_IFCHR, (info.st_mode & S_IFMT) == S_IFIFO)
    }

    // MARK: TCP (socket(2), connect(2), getsockopt(2), inet_pton(3), getaddrinfo(3))

    /// `inet_pton(3)`: the address bytes of a numeric IPv4 (4 bytes) or IPv6 (16 bytes) host, or nil.
    static func numericAddress(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// `inet_ntop(3)` of 4 or 16 address bytes.
    static func addressText(_ bytes: [UInt8]) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `getaddrinfo(3)` for TCP (`AF_UNSPEC`, `SOCK_STREAM`): the addresses' bytes in the resolver's
    /// order. Blocking (it may read files, load NSS modules, ask DNS). Throws the `EAI_*` code's text.
    static func resolveTCP(host: String, port: Int) throws(ResolutionError) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else { throw ResolutionError(description: String(cString: gai_strerror(status))) }
        defer { freeaddrinfo(list) }
        var result: [[UInt8]] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        var bytes = v4.pointee.sin_addr
                        result.append(withUnsafeBytes(of: &bytes) { Array($0) })
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        var bytes = v6.pointee.sin6_addr
                        result.append(withUnsafeBytes(of: &bytes) { Array($0) })
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        return result
    }

    struct ResolutionError: Error { var description: String }

    /// A non-blocking TCP socket (`SOCK_NONBLOCK | SOCK_CLOEXEC`) and `connect(2)` to 4 or 16
    /// address bytes and a port: the descriptor and 0 when connected at once, `EINPROGRESS` while
    /// the connection is being made (poll for writable, then ``socketError(_:)``); throws any other
    /// error (the socket is closed then).
    static func startTCPConnect(address bytes: [UInt8], port: UInt16) throws(Errno) -> (fd: Int32, inProgress: Bool) {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let fd = try retrying { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        func connectTo<Address>(_ address: Address) -> Int32 {
            withUnsafePointer(to: address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
        let status: Int32
        if bytes.count == 4 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
            status = connectTo(address)
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
            status = connectTo(address)
        }
        if status == 0 { return (fd, false) }
        let error = Errno(rawValue: errno)
        // connect(2) interrupted by a signal goes on in the background, like EINPROGRESS.
        if error == .nowInProgress || error == .interrupted { return (fd, true) }
        close(fd)
        throw error
    }

    /// `getsockopt(SO_ERROR)`: the pending error of a socket (a finished non-blocking connect), nil when none.
    static func socketError(_ fd: Int32) -> Errno? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return Errno(rawValue: errno) }
        return value == 0 ? nil : Errno(rawValue: value)
    }

    /// Sends one datagram to the unix socket at `address` (socket(2) `AF_UNIX`, `SOCK_DGRAM`,
    /// sendto(2)); an address starting with `@` is in the abstract namespace (unix(7)).
    static func sendDatagram(_ bytes: [UInt8], toUnixSocket address: String) throws(Errno) {
        var path = Array(address.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        // A path needs room for its NUL; an abstract name is counted by the length instead.
        guard !path.isEmpty, path.count < capacity || (path[0] == 0 && path.count <= capacity) else {
            throw Errno.invalidArgument
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path[0] == 0 ? 0 : 1))
        let fd = try retrying { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { close(fd) }
        _ = try withUnsafePointer(to: &socketAddress) { (pointer) throws(Errno) -> Int in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) -> Int in
                try retrying { sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
    }

    // MARK: Shared libraries and gettext (SharedLibrary, Gettext)

    static func dynamicOpen(_ name: String) -> Result<UnsafeMutableRawPointer, SharedLibrary.LoadError> {
        if let handle = dlopen(name, RTLD_NOW) { return .success(handle) }
        return .failure(SharedLibrary.LoadError(description: dlerror().map { String(cString: $0) } ?? "cannot load \(name)"))
    }

    /// `setlocale(LC_MESSAGES, NULL)`: the messages locale in effect (nothing is changed).
    static func messagesLocale() -> String? { setlocale(LC_MESSAGES, nil).map { String(cString: $0) } }

    static func dynamicSymbol(_ handle: UnsafeMutableRawPointer, _ name: String) -> Result<UnsafeMutableRawPointer, SharedLibrary.LoadError> {
        _ = dlerror()
        if let address = dlsym(handle, name) { return .success(address) }
        return .failure(SharedLibrary.LoadError(description: dlerror().map { String(cString: $0) } ?? "no symbol \(name)"))
    }

    static func translation(_ msgid: String, domain: String) -> String? {
        msgid.withCString { id in
            guard let text = dgettext(domain, id), UnsafePointer(text) != id, text.pointee != 0 else { return nil }
            return String(cString: text)
        }
    }

    static func bindTextDomain(_ domain: String, directory: String) {
        bindtextdomain(domain, directory)
    }

    static func useMessagesLocale(domain: String) {
        setlocale(LC_MESSAGES, "")
        bind_textdomain_codeset(domain, "UTF-8")
    }
}
