// SPDX-License-Identifier: Apache-2.0
// The platform layer against the real kernel: clocks, the thread helper, event descriptors, files,
// environment and spawning.
import Foundation
@testable import QiblaPlatform
import Synchronization
import SystemPackage
import Testing
import TestSupport

@Suite struct ClockTests {
    @Test func wallClockIsUnixTimeAndUTCBreakdownMatchesKnownInstants() {
        #expect(abs(WallClock.nowUnixSeconds() - Date().timeIntervalSince1970) < 1)
        #expect(WallClock.utc(unixSeconds: 0) == .init(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(WallClock.utc(unixSeconds: 1_700_000_000.9) == .init(year: 2023, month: 11, day: 14, hour: 22, minute: 13, second: 20))
    }

    @Test func monotonicClockAdvancesAcrossASleep() {
        let start = MonotonicClock.nowNanoseconds()
        MonotonicClock.sleep(for: .milliseconds(30))
        let elapsed = MonotonicClock.nowNanoseconds() - start
        #expect(elapsed >= 30_000_000 && elapsed < 2_000_000_000, "\(elapsed) ns")
    }

    @Test func pollTimeoutsRoundUpToWholeMilliseconds() {
        #expect(PollSet.milliseconds(nil) == -1)
        #expect(PollSet.milliseconds(.zero) == 0)
        #expect(PollSet.milliseconds(.microseconds(300)) == 1)
        #expect(PollSet.milliseconds(.milliseconds(1500)) == 1500)
        #expect(PollSet.milliseconds(.seconds(-1)) == 0)
    }
}

@Suite struct ThreadAndDescriptorTests {
    @Test func aStopRequestWakesTheThreadFromItsSleepAndItExits() throws {
        let thread = try PlatformThread.start { thread in
            while thread.sleep(for: .seconds(60)) {}
        }
        MonotonicClock.sleep(for: .milliseconds(20))
        #expect(!thread.hasExited)
        let start = ContinuousClock.now
        thread.requestStop()
        #expect(thread.waitForExit(timeout: .seconds(5)))
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(thread.isStopRequested && thread.hasExited)
    }

    @Test func aSleepUntilADeadlineKeepsAFixedScheduleAndAStopEndsItEarly() throws {
        // Three periods of 30 ms on an absolute schedule: never woken before a deadline, and the
        // schedule does not drift by the work between sleeps (20 ms here).
        let wakes = Mutex<[Int64]>([])
        let start = MonotonicClock.nowNanoseconds()
        let thread = try PlatformThread.start { thread in
            var deadline = start
            for _ in 0..<3 {
                deadline += 30_000_000
                guard thread.sleep(untilMonotonicNanoseconds: deadline) else { return }
                let woke = MonotonicClock.nowNanoseconds()
                wakes.withLock { $0.append(woke - deadline) }
                MonotonicClock.sleep(for: .milliseconds(20))
            }
            _ = thread.sleep(untilMonotonicNanoseconds: .max)  // until stopped
        }
        #expect(thread.waitForExit(timeout: .milliseconds(400)) == false)
        let lateness = wakes.withLock { $0 }
        #expect(lateness.count == 3)
        #expect(lateness.allSatisfy { $0 >= 0 }, "woken before its deadline: \(lateness) ns")
        let stopAt = MonotonicClock.nowNanoseconds()
        thread.requestStop()
        #expect(thread.waitForExit(timeout: .seconds(5)))
        #expect(MonotonicClock.nowNanoseconds() - stopAt < 2_000_000_000)
        // A deadline already past returns at once, true while no stop is requested.
        let past = try PlatformThread.start { thread in
            wakes.withLock { $0 = [thread.sleep(untilMonotonicNanoseconds: 0) ? 1 : 0] }
        }
        #expect(past.waitForExit(timeout: .seconds(5)))
        #expect(wakes.withLock { $0 } == [1])
    }

    @Test func threadIdentityTellsThreadsApart() throws {
        let here = PlatformThread.currentID
        #expect(here == PlatformThread.currentID)
        let other = Mutex<PlatformThread.ID?>(nil)
        let thread = try PlatformThread.start { _ in other.withLock { $0 = PlatformThread.currentID } }
        #expect(thread.waitForExit(timeout: .seconds(5)))
        #expect(other.withLock { $0 } != nil && other.withLock { $0 } != here)
    }

    @Test func eventFDBecomesReadableWhenSignalledAndDrainsToZero() throws {
        let event = try EventFD(); defer { event.close() }
        #expect(try event.fileDescriptor.poll(for: .readable, timeout: .zero).isEmpty)
        event.signal(); event.signal()
        #expect(try event.fileDescriptor.poll(for: .readable, timeout: .seconds(1)).contains(.readable))
        #expect(event.drain() == 2)
        #expect(event.drain() == 0)
    }

    @Test func pollSetReportsOnlyTheReadyEntry() throws {
        let a = try EventFD(), b = try EventFD()
        defer { a.close(); b.close() }
        var set = PollSet()
        set.append(a.fileDescriptor, events: .readable)
        set.append(b.fileDescriptor, events: .readable)
        b.signal()
        #expect(try set.poll(timeout: .seconds(1)) == 1)
        #expect(set.returnedEvents(at: 0).isEmpty && set.returnedEvents(at: 1) == .readable)
    }

    @Test func timerFDExpiresAfterItsDelay() throws {
        let timer = try TimerFD(); defer { timer.close() }
        try timer.arm(after: .milliseconds(20))
        #expect(timer.drain() == 0)
        #expect(try timer.fileDescriptor.poll(for: .readable, timeout: .seconds(2)).contains(.readable))
        #expect(timer.drain() == 1)
        try timer.disarm()
    }

    @Test func aSuppressedSIGPIPELeavesEPIPEAndTheProcessAlive() throws {
        let (read, write) = try FileDescriptor.pipe()
        try read.close()
        defer { try? write.close() }
        let result: Errno? = Signal.pipe.suppressed {
            do { _ = try write.writeAll([1, 2, 3]); return nil } catch { return error as? Errno }
        }
        #expect(result == .brokenPipe)
    }
}

@Suite struct FileSystemTests {
    @Test func atomicWriteThenReadGivesTheBytesAndLeavesNoTemporaryFile() throws {
        let dir = try TemporaryDirectory(prefix: "qibla-platform"); defer { dir.remove() }
        let path = dir.path + "/a/b/state"
        try FileSystem.createDirectories(dir.path + "/a/b")
        try FileSystem.writeFileAtomically(path, Array("key = 1\n".utf8))
        #expect(try FileSystem.readFile(path) == Array("key = 1\n".utf8))
        #expect(FileSystem.contentsOfDirectory(dir.path + "/a/b") == ["state"])
        #expect(try FileSystem.readFile(dir.path + "/missing") == nil)
        #expect(throws: Errno.fileTooLarge) { try FileSystem.readFile(path, limit: 3) }
        try FileSystem.rename(path, path + ".old")
        #expect(!FileSystem.exists(path) && FileSystem.exists(path + ".old"))
        try FileSystem.unlink(path + ".old")
        #expect(throws: Errno.noSuchFileOrDirectory) { try FileSystem.unlink(path + ".old") }
    }

    /// Issue 37: a sensor's presence, looked up relative to its devices' directory: a device
    /// directory linked as sysfs links them, moved away and back, and a directory that cannot be
    /// opened (the whole path is checked then).
    @Test func aPresenceCheckFollowsTheDeviceAwayAndBack() throws {
        let dir = try TemporaryDirectory(prefix: "qibla-platform"); defer { dir.remove() }
        try FileSystem.createDirectories(dir.path + "/devices/platform/magn/iio:device1")
        try FileSystem.createDirectories(dir.path + "/bus/iio/devices")
        try FileSystem.writeFileAtomically(dir.path + "/devices/platform/magn/iio:device1/name", Array("lis3mdl\n".utf8))
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/bus/iio/devices/iio:device1",
                                                   withDestinationPath: "../../../devices/platform/magn/iio:device1")
        let presence = FileSystem.PresenceCheck(directory: dir.path + "/bus/iio/devices", relativePath: "iio:device1/name")
        #expect(presence.path == dir.path + "/bus/iio/devices/iio:device1/name")
        #expect(presence.isWatched, "a tmpfs or disk tree sends inotify events: a check reads them, no path walk")
        #expect(presence.exists)
        try FileSystem.rename(dir.path + "/devices/platform/magn", dir.path + "/devices/platform/away")
        #expect(!presence.exists, "the link dangles")
        try FileSystem.rename(dir.path + "/devices/platform/away", dir.path + "/devices/platform/magn")
        #expect(presence.exists)
        // The link removed from the devices' directory, and put back.
        try FileSystem.unlink(dir.path + "/bus/iio/devices/iio:device1")
        #expect(!presence.exists, "the devices' directory lost the name")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/bus/iio/devices/iio:device1",
                                                   withDestinationPath: "../../../devices/platform/magn/iio:device1")
        #expect(presence.exists)
        #expect(presence.isWatched)
        // The file itself replaced: its watch ends, and every check walks the path from then on.
        try FileSystem.unlink(dir.path + "/devices/platform/magn/iio:device1/name")
        #expect(!presence.exists, "the file unlinked")
        try FileSystem.writeFileAtomically(dir.path + "/devices/platform/magn/iio:device1/name", Array("lis3mdl\n".utf8))
        #expect(presence.exists)
        #expect(!presence.isWatched)
        try FileSystem.unlink(dir.path + "/devices/platform/magn/iio:device1/name")
        #expect(!presence.exists, "walked")
        let missing = FileSystem.PresenceCheck(directory: dir.path + "/nowhere", relativePath: "iio:device1/name")
        #expect(!missing.exists)
        let whole = FileSystem.PresenceCheck(directory: dir.path + "/nowhere/..", relativePath: "bus/iio/devices/iio:device1/name")
        #expect(!whole.exists, "a directory that cannot be opened: the whole path, which goes through it")
    }

    @Test func recursiveRemoveDeletesTheTreeButNotWhatALinkPointsTo() throws {
        let outside = try TemporaryDirectory(prefix: "qibla-platform-outside"); defer { outside.remove() }
        try outside.write("keep", to: "precious")
        let base = try FileSystem.createTemporaryDirectory(in: NSTemporaryDirectory(), prefix: "qibla-platform-tree-")
        #expect(base.contains("qibla-platform-tree-") && FileSystem.exists(base))
        try FileSystem.createDirectories(base + "/sys/bus/iio/devices/iio:device0")
        try FileSystem.writeFileAtomically(base + "/sys/bus/iio/devices/iio:device0/name", Array("lis3mdl\n".utf8))
        try FileSystem.createFIFO(base + "/fifo")
        try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: base + "/dangling", withDestinationPath: base + "/nowhere")
        try FileSystem.removeRecursively(base)
        #expect(!FileSystem.existsWithoutFollowingLinks(base))
        #expect(FileSystem.exists(outside.path + "/precious"))
        try FileSystem.removeRecursively(base)  // already gone: not an error
    }
}

@Suite struct EnvironmentAndProcessTests {
    @Test func environmentSetGetUnset() throws {
        let name = "QIBLA_PLATFORM_TEST_\(SpawnedProcess.currentID)"
        #expect(Environment.value(name) == nil)
        try Environment.set(name, "a=b")
        #expect(Environment.value(name) == "a=b" && Environment.current[name] == "a=b")
        try Environment.unset(name)
        #expect(Environment.current[name] == nil)
    }

    @Test func aSpawnedChildGetsItsEnvironmentAndRedirectedOutputAndReportsItsExitStatus() throws {
        let dir = try TemporaryDirectory(prefix: "qibla-platform-spawn"); defer { dir.remove() }
        let child = try SpawnedProcess.spawn(["sh", "-c", "echo \"$QIBLA_WORD\"; exit 3"],
                                             environment: ["QIBLA_WORD": "salaam", "PATH": "/usr/bin:/bin"],
                                             standardOutput: dir.path + "/out")
        #expect(try child.wait() == .exited(3))
        #expect(FileSystem.readText(dir.path + "/out") == "salaam\n")
    }

    @Test func aSpawnedChildObeysSIGTERMEvenWhenTheParentThreadBlocksIt() throws {
        try Signal.block([.terminate])  // this test thread only; the child must start with an empty mask
        let child = try SpawnedProcess.spawn(["sleep", "30"])
        #expect(try child.poll() == nil)
        try child.send(.terminate)
        #expect(try child.wait() == .signalled(.terminate))
        #expect(SpawnedProcess.Termination.signalled(.terminate).shellStatus == 143)
    }

    @Test func spawningAMissingProgramThrows() {
        #expect(throws: Errno.noSuchFileOrDirectory) { try SpawnedProcess.spawn(["/nonexistent/qibla"]) }
    }

    @Test func theCurrentExecutableIsFound() throws {
        let path = try SpawnedProcess.currentExecutablePath()
        #expect(path.hasPrefix("/") && FileSystem.exists(path))
    }
}
