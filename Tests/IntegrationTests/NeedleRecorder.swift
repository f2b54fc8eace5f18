// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaDBus
import QiblaPlatform
import TestSupport

/// A client of the real qiblad that holds a compass claim and records, with this process's
/// monotonic clock, every `PropertiesChanged` value of the heading group (issue 30): what a needle
/// in a client would show at any instant is the last value received before it.
final class NeedleRecorder: @unchecked Sendable {
    struct Reading: Sendable {
        /// `CLOCK_MONOTONIC` seconds when the signal was read.
        var timeSeconds: Double
        var magneticHeading: Double
        var headingError: Double
        var fused: Bool?
    }

    private let lock = NSLock()
    private var readings: [Reading] = []
    private var current = Reading(timeSeconds: 0, magneticHeading: .nan, headingError: .nan)
    private let stopFlag = Atomic(false)
    private var thread: Thread?

    /// Connects to `bus`, subscribes to qiblad's PropertiesChanged, claims the compass and starts
    /// reading on a thread of its own.
    init(bus: PrivateBus) throws {
        let address = bus.address
        let stop = stopFlag
        let ready = DispatchSemaphore(value: 0)
        let failure = Atomic<String?>(nil)
        let t = Thread { [weak self] in
            do {
                // The connection lives on this thread only (libdbus connections are not Sendable here).
                let connection = try DBusConnection(.address(address))
                try connection.addMatch("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='\(QibladHarness.path)'")
                connection.onSignal { message in self?.record(message) }
                let claim = DBusMessage.methodCall(destination: QibladHarness.name, path: QibladHarness.path,
                                                   interface: QibladHarness.interface, member: "ClaimCompass")
                _ = try connection.call(claim, timeoutMilliseconds: 5000)
                ready.signal()
                while !stop.value { _ = connection.readWriteDispatch(timeoutMilliseconds: 20) }
                connection.close()
            } catch {
                failure.value = "\(error)"
                ready.signal()
            }
        }
        t.start()
        thread = t
        ready.wait()
        if let message = failure.value { throw HarnessError.busctl("NeedleRecorder: \(message)") }
    }

    private func record(_ message: DBusMessage) {
        let now = MonotonicClock.nowSeconds()
        guard let arguments = try? message.arguments(), arguments.count >= 2,
              case .dictionary(_, _, let entries) = arguments[1] else { return }
        lock.lock(); defer { lock.unlock() }
        var changed = false
        for (key, value) in entries {
            guard case .string(let name) = key else { continue }
            let inner: DBusValue = if case .variant(let v) = value { v } else { value }
            switch (name, inner) {
            case ("MagneticHeading", .double(let d)): current.magneticHeading = d; changed = true
            case ("HeadingError", .double(let d)): current.headingError = d; changed = true
            case ("HeadingFused", .bool(let b)): current.fused = b
            default: break
            }
        }
        if changed {
            current.timeSeconds = now
            readings.append(current)
        }
    }

    /// Everything received so far, in order.
    var all: [Reading] { lock.lock(); defer { lock.unlock() }; return readings }

    /// The last `HeadingFused` value received (nil before any).
    var fused: Bool? { lock.lock(); defer { lock.unlock() }; return current.fused }

    func stop() {
        stopFlag.value = true
        _ = waitUntil(timeout: 2) { self.thread?.isFinished ?? true }
    }

    deinit { stop() }
}

/// How a needle did against the truth of a scene, read every `readIntervalSeconds` like a client
/// that looks at the last published value (issue 30's table). Pure: the readings and the truth
/// come in; the phases (turning, holding) are found from the truth's own rate, not from the daemon.
struct NeedleScore: CustomStringConvertible {
    var holdRMSDegrees = Double.nan
    var turnP95Degrees = Double.nan
    var settleMedianMilliseconds = Double.nan
    var worstDuringDisturbanceDegrees = Double.nan
    /// Share of the read errors within 1× and 3× the published `HeadingError`.
    var withinOneSigma = Double.nan
    var withinThreeSigma = Double.nan
    var reads = 0

    var description: String {
        String(format: "holds RMS %.2f°, turns p95 %.1f°, settled ≤2° median %.0f ms, disturbance max %.1f°, within 1σ %.0f %%, 3σ %.0f %% (%d reads)",
               holdRMSDegrees, turnP95Degrees, settleMedianMilliseconds, worstDuringDisturbanceDegrees,
               withinOneSigma * 100, withinThreeSigma * 100, reads)
    }

    /// - Parameters:
    ///   - readings: the recorder's signals (monotonic seconds).
    ///   - truth: the magnetic heading of the axis in use at a monotonic instant (nil where undefined).
    ///   - from, to: the monotonic interval to score.
    ///   - disturbed: whether a disturbance (a magnet) is present at a monotonic instant.
    ///   - turnRateDegreesPerSecond: above this rate of the truth the phone is turning.
    static func score(_ readings: [NeedleRecorder.Reading], truth: (Double) -> Double?, from: Double, to: Double,
                      readIntervalSeconds: Double = 0.05, disturbed: (Double) -> Bool = { _ in false },
                      turnRateDegreesPerSecond: Double = 10) -> NeedleScore {
        var score = NeedleScore()
        var holds: [Double] = [], turns: [Double] = [], disturbance: [Double] = []
        var one = 0, three = 0, honest = 0
        var settleTimes: [Double] = []
        var turnEnd: Double?
        var index = 0
        var t = from
        while t <= to {
            while index < readings.count, readings[index].timeSeconds <= t { index += 1 }
            defer { t += readIntervalSeconds }
            guard index > 0, let now = truth(t), let before = truth(t - 0.02), let after = truth(t + 0.02) else { continue }
            let reading = readings[index - 1]
            guard reading.magneticHeading.isFinite else { continue }
            let rate = abs(Angle.normalized180(after - before)) / 0.04
            let error = abs(Angle.normalized180(reading.magneticHeading - now))
            score.reads += 1
            if disturbed(t) {
                disturbance.append(error)
            } else if rate > turnRateDegreesPerSecond {
                turns.append(error)
                turnEnd = nil
            } else {
                holds.append(error)
                if turnEnd == nil, let last = turns.last, last.isFinite { turnEnd = t }
                if let end = turnEnd, end.isFinite, error <= 2 { settleTimes.append(t - end); turnEnd = .infinity }
            }
            if reading.headingError.isFinite, reading.headingError > 0 {
                honest += 1
                if error <= reading.headingError { one += 1 }
                if error <= 3 * reading.headingError { three += 1 }
            }
        }
        if !holds.isEmpty { score.holdRMSDegrees = (holds.map { $0 * $0 }.reduce(0, +) / Double(holds.count)).squareRoot() }
        score.turnP95Degrees = percentile(turns, 0.95)
        score.settleMedianMilliseconds = percentile(settleTimes, 0.5) * 1000
        score.worstDuringDisturbanceDegrees = disturbance.max() ?? .nan
        if honest > 0 { score.withinOneSigma = Double(one) / Double(honest); score.withinThreeSigma = Double(three) / Double(honest) }
        return score
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
}
