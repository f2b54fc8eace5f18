// SPDX-License-Identifier: Apache-2.0
// One thread reads every polled sensor (cf. iio-sensor-proxy's drv-iio-poll-accel.c, one timer
// per driver; here one thread for both): per period x, y, z of the magnetometer, then of the
// accelerometer, `pread` into a fixed buffer, integers parsed without `String`. Samples collect in
// an inline mailbox that is handed to the event loop once per hand-off interval (or when full, or
// on a failure). The hand-off runs on this thread, borrowing the loop while it sleeps in `poll`
// (`EventLoop.runWhileAsleep`): a sample costs one wakeup, this thread's. Only when the loop is
// awake (a bus call, a timer) is the batch posted to it instead.
// A slow sysfs read blocks only this thread, never the bus (Tests/IntegrationTests/SlowDeviceTests).
import QiblaCore
import QiblaEventLoop
import QiblaPlatform
import Synchronization

/// The three `_raw` attributes of one polled sensor and how to turn them into a sample. A class:
/// the sampling thread takes the list once per configuration change, and passing one reference
/// per channel per period costs one retain, not one per attribute and string.
final class PolledChannel: Sendable {
    let kind: SensorKind
    let axes: [SysfsAttribute]
    let calibration: AxisCalibration
    /// The device's sysfs `name` attribute, checked once a second: a kernel answers reads of an
    /// unbound device's open attributes with ENODEV, but a tree of plain files (the simulator,
    /// a test fixture) keeps answering, so the device directory's presence is checked as well
    /// (relative to the devices' directory, opened once; where the tree sends `inotify(7)`
    /// events, walked only after one that may have removed it: ``FileSystem/PresenceCheck``).
    let presence: FileSystem.PresenceCheck
    /// For the message when the device has gone: `iio:deviceN (name)`.
    let deviceDescription: String
    /// The accelerometer's motion event, when its driver has one (issue 37): a rest waits for it
    /// with no reads at all instead of reading at the rest rate.
    let motionEvent: MotionEvent?

    init(kind: SensorKind, axes: [SysfsAttribute], calibration: AxisCalibration, presence: FileSystem.PresenceCheck,
         deviceDescription: String, motionEvent: MotionEvent? = nil) {
        self.kind = kind
        self.axes = axes
        self.calibration = calibration
        self.presence = presence
        self.deviceDescription = deviceDescription
        self.motionEvent = motionEvent
    }
}

/// What the sampling thread reports to the loop; always delivered by the loop's holder (its thread, or
/// the sampling thread borrowing it while it sleeps).
struct PollingSamplerSink {
    var deliver: (SensorSampleBatch) -> Void
    var dropped: (_ kind: SensorKind, _ count: Int) -> Void
    /// The phone began (true) or ended (false) a rest.
    var restChanged: (_ resting: Bool) -> Void
    var failed: (_ kind: SensorKind, _ reason: String) -> Void
}

final class PollingSampler: @unchecked Sendable {
    private struct Mailbox {
        var channels: [PolledChannel] = []
        /// Changes with every ``add(_:)`` and ``remove(_:)``: a sample read under another
        /// configuration is not delivered (its channel may be gone or replaced).
        var configuration = 0
        var samples = SensorSampleBatch()
        var dropped: [SensorKind: Int] = [:]
        var failures: [(SensorKind, String)] = []
        var postPending = false
        /// `CLOCK_MONOTONIC` nanoseconds of the last hand-off.
        var lastHandOff = MonotonicClock.nowNanoseconds()
    }

    private let loop: EventLoop
    /// Nanoseconds between reads.
    private let period: Int64
    /// A hand-off is due this long (nanoseconds) after the last: half a period before
    /// `handOffInterval`, so that a hand-off every interval does not slip to the following sample by
    /// the time the reads take.
    private let handOffDue: Int64
    private let hook: (@Sendable (String) -> Void)?
    /// How often the reading thread checks that its devices are still in sysfs: on a wakeup it has
    /// anyway (the first read of a period), so the check costs an `access`, not a wakeup of the loop.
    static let presenceInterval: Duration = .seconds(1)
    private let mailbox = Mutex(Mailbox())
    /// ``Mailbox/configuration``, readable without the lock: the thread takes the channel list only
    /// when it changed, not every period.
    private let configuration = Atomic<Int>(0)
    /// Built once: posting an existing closure allocates nothing.
    private var drain: (@Sendable () -> Void)!
    // Loop-thread state.
    private var thread: PlatformThread?
    var sink: PollingSamplerSink?

    /// Nanoseconds between reads while the phone rests (nil: always `period`).
    private let restPeriod: Int64?
    private let rest: RestDetector.Configuration
    /// Reads so far and those made at the rest rate (tests and diagnostics), reading thread only
    /// writes them.
    private let readCounts = Atomic<Int>(0)
    /// Gyroscope samples read so far (tests: none while the phone rests).
    private let gyroscopeReadCounts = Atomic<Int>(0)
    private let restingReadCounts = Atomic<Int>(0)
    /// Rest reads near motion that were read again one full period later (tests, diagnostics).
    private let nearMotionRereadCounts = Atomic<Int>(0)
    /// Rests spent waiting on a motion event, and the events that ended them (tests, diagnostics).
    private let eventRestCounts = Atomic<Int>(0)
    private let motionEventCounts = Atomic<Int>(0)
    /// Wakes the reading thread from a wait on a motion event (a stop, a configuration change).
    private let wake: EventFD?

    init(loop: EventLoop, sampleRateHertz: Double, restSampleRateHertz: Double? = nil,
         rest: RestDetector.Configuration = .init(), handOffInterval: Duration, hook: (@Sendable (String) -> Void)?) {
        self.loop = loop
        period = Int64(1e9 / sampleRateHertz)
        restPeriod = restSampleRateHertz.flatMap { $0.isFinite && $0 > 0 && $0 < sampleRateHertz ? Int64(1e9 / $0) : nil }
        self.rest = rest
        let interval = handOffInterval.components
        handOffDue = max(0, interval.seconds * 1_000_000_000 + interval.attoseconds / 1_000_000_000 - period / 2)
        self.hook = hook
        wake = try? EventFD()
        drain = { @Sendable [weak self] in self?.handOver() }  // @Sendable spelled out for Swift 6.0 (Debian 13)
    }

    deinit { wake?.close() }

    /// Rests that waited on a motion event instead of reading, and the events that ended them.
    var motionEventStatistics: (rests: Int, events: Int) {
        (eventRestCounts.load(ordering: .relaxed), motionEventCounts.load(ordering: .relaxed))
    }

    /// Periods read so far, and how many of them at the rest rate.
    var readStatistics: (periods: Int, resting: Int) {
        (readCounts.load(ordering: .relaxed), restingReadCounts.load(ordering: .relaxed))
    }

    /// Rest reads that came near motion (`RestDetector.isNearMotion`) and were read again at once.
    var nearMotionRereads: Int { nearMotionRereadCounts.load(ordering: .relaxed) }

    /// Gyroscope samples read so far.
    var gyroscopeReads: Int { gyroscopeReadCounts.load(ordering: .relaxed) }

    /// The reading thread while one runs (tests check it exits after the last channel is removed).
    var readingThread: PlatformThread? { thread }

    /// Where a kind is read within a period: the gyroscope first, then the accelerometer, then the
    /// magnetometer, the order `SensorReplay` applies an instant in. The attitude filter's
    /// updates of a period then see the rotation its gyroscope sample brings (issue 36: taken
    /// after them, the attitude was a sample late). The model tilt-compensates a field sample with
    /// the last acceleration it got, so the acceleration of the same period must reach it first:
    /// at rest a period carries the still stretch's means, and a mean field compensated with the
    /// previous period's single raw acceleration held a heading 0.5° off for as long as the phone
    /// rested (σ 0.02 m/s² at a 55° dip: SunCheckIntegrationTests). A resting period skips the
    /// gyroscope and ends with the magnetometer.
    static func readingRank(_ kind: SensorKind) -> Int {
        switch kind {
        case .gyroscope: 0
        case .accelerometer: 1
        case .magnetometer: 2
        }
    }

    /// Starts reading `channel` with the others (loop thread); starts the thread if none runs.
    func add(_ channel: PolledChannel) throws(SensorSetupError) {
        changeConfiguration { box in
            box.channels.removeAll { $0.kind == channel.kind }
            box.channels.insert(channel, at: box.channels.firstIndex { Self.readingRank($0.kind) > Self.readingRank(channel.kind) }
                                ?? box.channels.endIndex)
        }
        guard thread == nil else { return }
        let period = self.period, hook = self.hook
        do {
            thread = try PlatformThread.start { [self] thread in
                readLoop(thread: thread, period: period, hook: hook)
            }
        } catch {
            changeConfiguration { box in box.channels.removeAll { $0.kind == channel.kind } }
            throw SensorSetupError("cannot start the sensor reading thread: \(error)")
        }
    }

    /// Stops reading `kind` and forgets what it read but was not delivered (loop thread). The last
    /// removal stops the thread without waiting for a read in progress. Returns the stopped thread.
    @discardableResult
    func remove(_ kind: SensorKind) -> PlatformThread? {
        let empty = changeConfiguration { box -> Bool in
            box.channels.removeAll { $0.kind == kind }
            box.samples.removeAll { $0.kind == kind }
            box.dropped[kind] = nil
            box.failures.removeAll { $0.0 == kind }
            return box.channels.isEmpty
        }
        guard empty, let stopped = thread else { return nil }
        stopped.requestStop()
        wake?.signal()
        thread = nil
        return stopped
    }

    private func changeConfiguration<R>(_ change: (inout Mailbox) -> R) -> R {
        mailbox.withLock { box in
            let result = change(&box)
            box.configuration &+= 1
            configuration.store(box.configuration, ordering: .releasing)
            wake?.signal()
            return result
        }
    }

    private func handOver() {
        var samples = SensorSampleBatch()
        let (dropped, failures) = mailbox.withLock { box in
            box.postPending = false
            box.lastHandOff = MonotonicClock.nowNanoseconds()
            swap(&samples, &box.samples)
            guard !box.dropped.isEmpty || !box.failures.isEmpty else { return ([SensorKind: Int](), [(SensorKind, String)]()) }
            defer {
                box.dropped.removeAll()
                box.failures.removeAll()
            }
            return (box.dropped, box.failures)
        }
        guard let sink else { return }
        if !samples.isEmpty { sink.deliver(samples) }
        for (kind, count) in dropped { sink.dropped(kind, count) }
        for (kind, reason) in failures { sink.failed(kind, reason) }
    }

    /// The thread body: each period read every channel, put the samples in the mailbox, hand them
    /// over when due, sleep (stop-aware) until the next period on a fixed `CLOCK_MONOTONIC` schedule.
    private func readLoop(thread: PlatformThread, period: Int64, hook: (@Sendable (String) -> Void)?) {
        let presenceComponents = Self.presenceInterval.components
        let presenceInterval = presenceComponents.seconds * 1_000_000_000 + presenceComponents.attoseconds / 1_000_000_000
        var channels: [PolledChannel] = []
        var configuration = -1
        var next = MonotonicClock.nowNanoseconds()
        var nextPresenceCheck = next + presenceInterval
        var raw = (0.0, 0.0, 0.0)
        // Motion-aware rate: the detector sees every sample on this thread, so the first sample that
        // shows motion after a rest brings the full rate back at once (the next read is one full
        // period later).
        var detector = RestDetector(configuration: rest)
        // A resting period's samples wait here until the period's last read, and go on only when
        // the detector says they carry something new (`RestDetector.shouldHandOver`): a phone lying
        // still costs its reads, not the heading pipeline, the loop or the bus.
        var held = (first: SensorSample?.none, second: SensorSample?.none)
        var announcedResting = false
        // A rest read near motion (`RestDetector.isNearMotion`) is read again one full period
        // later rather than a rest period later; this is when the rest's next read was due (the
        // rest's reads keep their times; one re-read per rest read at most).
        var rereadBefore: Int64?
        // Issue 37: the motion event the current rest waits on (armed), one that failed (not
        // used again this run), and the descriptors a wait polls: the event's and `wake`'s.
        var armedMotion: MotionEvent?
        var failedMotion: MotionEvent?
        var waitSet = PollSet()
        defer { armedMotion?.disarm() }
        while !thread.isStopRequested {
            if self.configuration.load(ordering: .acquiring) != configuration {
                (channels, configuration) = mailbox.withLock { ($0.channels, $0.configuration) }
                // A sensor added, removed or back: a new still stretch at the full rate, so its
                // first samples reach the heading (at rest they would wait for a drift that a
                // still phone never shows).
                if detector.isResting {
                    detector.reset()
                    armedMotion?.disarm()
                    armedMotion = nil
                }
            }
            let restingPeriod = restPeriod != nil && detector.isResting
            let checkPresence = next >= nextPresenceCheck
            if checkPresence { nextPresenceCheck = next + presenceInterval }
            // Power: while the phone rests the gyroscope is not read at all (it draws several
            // times what the other two do); the period ends with the last channel that is read.
            var lastIndex = channels.count - 1
            if restingPeriod { while lastIndex >= 0, channels[lastIndex].kind == .gyroscope { lastIndex -= 1 } }
            for channelIndex in channels.indices {
                let channel = channels[channelIndex]
                if restingPeriod, channel.kind == .gyroscope { continue }
                let lastOfPeriod = channelIndex == lastIndex
                var dropped = 0
                var failure: String?
                if checkPresence, !channel.presence.exists {
                    failure = "\(channel.deviceDescription) disappeared from sysfs"
                }
                let timestamp = MonotonicClock.nowNanoseconds()
                for index in channel.axes.indices where failure == nil {
                    let axis = channel.axes[index]
                    hook?(axis.path)
                    let value: Double?
                    // A raw count: an integer a channel can hold (signed 32 bits; the polled
                    // attributes carry no scan type), anything else dropped like garbage.
                    do { value = try axis.readRawCount() } catch {
                        failure = "\(axis.path): read failed: \(error)"
                        break
                    }
                    guard let value else { dropped += 1; continue }
                    switch index {
                    case 0: raw.0 = value
                    case 1: raw.1 = value
                    default: raw.2 = value
                    }
                }
                if thread.isStopRequested { return }
                if channel.kind == .gyroscope { gyroscopeReadCounts.add(1, ordering: .relaxed) }
                var sample: SensorSample?
                if failure == nil, dropped == 0 {
                    if let vector = channel.calibration.apply(raw: Vector3(raw.0, raw.1, raw.2)) {
                        sample = SensorSample(kind: channel.kind, vector: vector, timestampNanoseconds: timestamp)
                        if restPeriod != nil {
                            let seconds = Double(timestamp) * 1e-9
                            switch channel.kind {
                            case .accelerometer: detector.addAcceleration(vector, time: seconds)
                            case .magnetometer: detector.addField(vector, time: seconds)
                            case .gyroscope: break  // the rest is told by the two read at rest
                            }
                        }
                    } else {
                        dropped = 1
                    }
                }
                var passOn = true
                if restingPeriod {
                    if let taken = sample {
                        if held.first == nil { held.first = taken } else { held.second = taken }
                    }
                    sample = nil
                    let quiet = failure == nil && dropped == 0
                    if lastOfPeriod { passOn = detector.shouldHandOver() }
                    if quiet, !lastOfPeriod || !passOn {
                        if lastOfPeriod { held = (nil, nil) }
                        continue
                    }
                } else if restPeriod != nil, lastOfPeriod {
                    _ = detector.shouldHandOver()
                }
                let post = mailbox.withLock { box -> Bool in
                    // The channels changed while this thread was reading.
                    guard box.configuration == configuration else { return false }
                    if let failure {
                        box.channels.removeAll { $0.kind == channel.kind }
                        box.configuration &+= 1
                        self.configuration.store(box.configuration, ordering: .releasing)
                        box.failures.append((channel.kind, failure))
                    }
                    if dropped > 0 { box.dropped[channel.kind, default: 0] += dropped }
                    if let sample {
                        box.samples.append(sample)
                    }
                    if passOn, lastOfPeriod || failure != nil {
                        // A resting period's samples go on as the still stretch's means, with their
                        // own times (RestDetector).
                        if let first = held.first { box.samples.append(first.resting(detector)) }
                        if let second = held.second { box.samples.append(second.resting(detector)) }
                    }
                    // A period's samples go together: handing the magnetometer over alone and the
                    // accelerometer a moment later would change the heading twice within the rate
                    // limit and arm a retry timer (two loop wakeups) at slow sample rates.
                    let due = failure != nil || box.samples.count + channels.count > SensorSampleBatch.capacity
                        || (lastOfPeriod && timestamp - box.lastHandOff >= handOffDue)
                    guard due, !box.postPending, !box.samples.isEmpty || !box.dropped.isEmpty || !box.failures.isEmpty else {
                        return false
                    }
                    box.postPending = true
                    return true
                }
                if lastOfPeriod || failure != nil { held = (nil, nil) }
                if post, !loop.runWhileAsleep({ handOver() }) { loop.post(drain) }
            }
            readCounts.add(1, ordering: .relaxed)
            if restPeriod != nil, detector.isResting != announcedResting {
                // Once per rest, not per period: the loop hears of it (one wakeup).
                announcedResting = detector.isResting
                let resting = announcedResting
                loop.post { [weak self] in self?.sink?.restChanged(resting) }
            }
            if detector.isResting, let restPeriod {
                if let motion = channels.lazy.compactMap(\.motionEvent).first, motion !== failedMotion, let wake {
                    // Rest on the accelerometer's own motion event: no reads, no wakeups until the
                    // chip sees motion (or a stop or a configuration change wakes this thread).
                    if armedMotion !== motion {
                        armedMotion?.disarm()
                        armedMotion = motion.arm() ? motion : nil
                        if armedMotion == nil { failedMotion = motion; continue }
                        eventRestCounts.add(1, ordering: .relaxed)
                    }
                    waitSet.removeAll()
                    waitSet.append(motion.descriptor, events: .readable)
                    waitSet.append(wake.fileDescriptor, events: .readable)
                    if (try? waitSet.poll(timeout: nil)) == nil { failedMotion = motion }
                    if thread.isStopRequested { return }
                    wake.drain()
                    let events = waitSet.returnedEvents(at: 0)
                    if !events.isDisjoint(with: [.error, .hangup, .invalid]) { failedMotion = motion }
                    if events.contains(.readable) || failedMotion === motion {
                        if motion.drain() > 0 { motionEventCounts.add(1, ordering: .relaxed) }
                        motion.disarm()
                        armedMotion = nil
                        // Read at once at the full rate: the first samples tell where it moved.
                        detector.motionReported(time: Double(MonotonicClock.nowNanoseconds()) * 1e-9)
                    }
                    next = MonotonicClock.nowNanoseconds()
                    continue
                }
                restingReadCounts.add(1, ordering: .relaxed)
                if let due = rereadBefore {
                    next = due
                    rereadBefore = nil
                } else if restingPeriod, detector.isNearMotion {
                    rereadBefore = next + restPeriod
                    next += period
                    nearMotionRereadCounts.add(1, ordering: .relaxed)
                } else {
                    next += restPeriod
                }
            } else {
                rereadBefore = nil
                next += period
            }
            let now = MonotonicClock.nowNanoseconds()
            if next < now { next = now }  // a slow read does not cause a burst afterwards
            guard thread.sleep(untilMonotonicNanoseconds: next) else { return }
        }
    }
}
