// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Decides which properties go out in `PropertiesChanged` and when: every real change at once,
/// except the heading group (``ThrottleGroup/heading``), which goes out at most
/// ``Configuration/maxSignalRateHertz`` times a second and only for changes of at least
/// ``Configuration/headingResolutionDegrees`` — so a phone lying still is silent.
///
/// Pure: the caller passes the monotonic time in seconds, sends what ``Emission`` names, and when
/// ``Emission/retryAfterSeconds`` is set calls ``update(_:nowSeconds:)`` again after that long
/// (one timer, not one per change).
public struct PropertyPublisher: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// `max-signal-rate`: most heading-group signals per second (1–100) from the magnetometer
        /// and accelerometer alone (a 0.5 s moving average: more signals would show its lag, not
        /// a better needle).
        public var maxSignalRateHertz: Double = 10
        /// Most heading-group signals per second while the heading is fused (`HeadingFused`; issue
        /// 30): a client shows the last value, so in a turn of 150°/s what it sees ages by up to
        /// one interval; at 50 the turn's 95th-percentile error a client reads stays within 5°
        /// through the daemon, at 10 it is 11–14° (BENCHMARKS.md, "The fused needle through the
        /// daemon"). A still phone sends nothing either way. `max-signal-rate` sets both.
        public var fusedMaxSignalRateHertz: Double = 50
        /// Smallest heading-group change that is signalled, degrees.
        public var headingResolutionDegrees: Double = 0.1
        public init() {}
    }

    /// What to send now.
    public struct Emission: Sendable, Equatable {
        /// Changed properties to send at once (one signal), in XML order.
        public var immediate = PropertySet()
        /// Heading-group properties to send now (a second signal), in XML order.
        public var heading = PropertySet()
        /// A heading-group change is held back by the rate limit: call again after this many seconds.
        public var retryAfterSeconds: Double?

        public var isEmpty: Bool { immediate.isEmpty && heading.isEmpty }
    }

    public var configuration: Configuration
    /// `allCases` once: the synthesized `allCases` builds a new array on every call.
    private static let allProperties = PropertySet.allProperties
    /// What clients have been told (or, before ``goLive()``, what they will read).
    /// Indexed by ``QiblaProperty/allCases`` position (``index(_:)``): no hashing, no dictionary
    /// storage to reallocate on the sample path.
    private var told: [PropertyValue?] = Array(repeating: nil, count: QiblaProperty.allCases.count)
    private var lastHeadingEmissionSeconds: Double?
    /// False until the bus name is owned: until then changes are recorded, not sent.
    public private(set) var isLive = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// From now on changes are signalled (the bus name is ours).
    public mutating func goLive() { isLive = true }

    /// Compares `properties` with what clients were told and says what to send.
    public mutating func update(_ properties: PublishedProperties, nowSeconds: Double) -> Emission {
        var emission = Emission()
        guard isLive else {
            for (index, property) in Self.allProperties.enumerated() { told[index] = properties[property] }
            return emission
        }
        var headingPending = false
        for (index, property) in Self.allProperties.enumerated() {
            let value = properties[property]
            guard value != told[index] else { continue }
            if property.throttleGroup == .heading {
                if isSignificant(property, value, told: told[index]) { headingPending = true }
            } else {
                emission.immediate.insert(index: index)
                told[index] = value
            }
        }
        guard headingPending else { return emission }

        let rate = properties.headingFused ? configuration.fusedMaxSignalRateHertz : configuration.maxSignalRateHertz
        let minimumInterval = 1 / max(rate, 1e-3)
        if let last = lastHeadingEmissionSeconds, nowSeconds - last < minimumInterval - Self.slack(minimumInterval),
           nowSeconds >= last {
            emission.retryAfterSeconds = minimumInterval - (nowSeconds - last)
            return emission
        }
        for (index, property) in Self.allProperties.enumerated() where property.throttleGroup == .heading {
            let value = properties[property]
            if value != told[index], isSignificant(property, value, told: told[index]) {
                emission.heading.insert(index: index)
                told[index] = value
            }
        }
        lastHeadingEmissionSeconds = nowSeconds
        return emission
    }

    /// How early a held heading change may go out, seconds: a tenth of the interval, at most 5 ms.
    /// Samples reach the publisher once per hand-off interval, which is the signal interval, give
    /// or take the time the reads took; without a slack half of them would be held back for a few
    /// microseconds and cost a timer, that is a wakeup, each. So the rate is at most
    /// `maxSignalRateHertz / 0.9` over one interval, and `maxSignalRateHertz` at the hand-off pace
    /// (like the kernel's timer slack, `prctl(PR_SET_TIMERSLACK)`, in the other direction).
    static func slack(_ minimumIntervalSeconds: Double) -> Double {
        min(0.1 * minimumIntervalSeconds, 0.005)
    }

    /// A heading-group change worth a signal: at least the resolution (circular for angles;
    /// `HeadingError` is a plain magnitude), or a change between known and unknown (NaN).
    private func isSignificant(_ property: QiblaProperty, _ value: PropertyValue, told: PropertyValue?) -> Bool {
        guard case .double(let new) = value, case .double(let old)? = told else { return true }
        if new.isNaN || old.isNaN { return new.isNaN != old.isNaN }
        let difference = property == .headingError ? abs(new - old) : abs(Angle.normalized180(new - old))
        return difference >= configuration.headingResolutionDegrees
    }
}
