// SPDX-License-Identifier: Apache-2.0
/// Tells a phone lying still from one that moves, from the accelerometer and the magnetometer
/// against their own noise, so that the sensors can be read slowly while nothing changes (issue 25).
///
/// Pure, no clock: the caller passes each sample with its time. The detector keeps a reference
/// per sensor, the exponential mean (time constant `referenceSeconds`) of the current still
/// stretch; a sample whose acceleration differs from it by more than
/// `accelerationThresholdMetresPerSecondSquared`, or whose field differs by more than
/// `fieldThresholdMicrotesla` (a phone turned flat on a table moves only the field), is motion and
/// becomes the new reference. The phone is **resting** once no motion was seen for
/// `restAfterSeconds`; the first motion ends the rest at once.
///
/// The thresholds are several standard deviations of a phone's noise (accelerometer ≈ 0.05 m/s²,
/// magnetometer ≈ 0.4 µT per axis; the difference of two samples has √2 that, its length √3 times
/// more): false motion stays rare, and a turn of about 8° or more (1° moves a 20 µT horizontal
/// field by 0.35 µT) is seen within one sample; smaller or slower ones reach the heading through
/// the drift hand-over below.
///
/// At rest the samples repeat what the heading already holds: ``shouldHandOver()`` tells the
/// sampler to pass a period's samples on only when the references are further from the samples
/// last passed on than the drift thresholds (a nudge or a turn too small or too slow to count as
/// motion still reaches the heading once the reference has followed it; nothing else wakes the
/// pipeline or the bus).
public struct RestDetector: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        /// Acceleration change that counts as motion, m/s² (default 0.35: 4σ of the difference
        /// length for 0.05 m/s² noise per axis).
        public var accelerationThresholdMetresPerSecondSquared: Double
        /// Field change that counts as motion, microtesla (default 3: about 4σ of a sample's
        /// distance from the mean for 0.4 µT noise per axis, heavy tails included; a turn of about
        /// 8° of a 20 µT horizontal field — smaller turns are still read, at the rest rate).
        public var fieldThresholdMicrotesla: Double
        /// Seconds without motion before the phone counts as resting (default 2): the still
        /// stretch a gyroscope's bias is learned from (`StillBiasWindow`'s 1 s windows of the full
        /// rate; the gyroscope is not read at rest).
        public var restAfterSeconds: Double
        /// The same for a phone without a gyroscope (default 1: half a second for the hand to
        /// settle, then one heading smoothing window of 0.5 s of still samples, which the heading
        /// holds while the phone rests): nothing is learned from a longer still stretch there, and
        /// the full rate's first seconds were most of a short look's cost (issue 37). At 0.5 s the
        /// held window kept the samples taken as a pose changed (CompassIntegrationTests'
        /// Reykjavik RMS 1.003°, over its 1°). ``forPhone(hasGyroscope:)`` picks it.
        public var restAfterSecondsWithoutGyroscope: Double
        /// The same for a phone without a gyroscope that has not moved since its sensors started
        /// (default 0.5: one heading smoothing window). The window the heading then holds has only
        /// samples of that still stretch, with no pose change before it for the window to keep,
        /// which is what the half second of settling above is for (issue 37: a short look at a
        /// phone lying still; the held heading is as good as after 1 s,
        /// `FirstRestTests` in QiblaDaemonTests).
        public var firstRestAfterSecondsWithoutGyroscope: Double
        /// Seconds without motion before the phone counts as resting while it has not moved since
        /// the first sample (nil: ``restAfterSeconds``; never later than it).
        /// ``forPhone(hasGyroscope:)`` sets it.
        public var firstRestAfterSeconds: Double?
        /// Time constant of the references' mean, seconds (default 1: the reference's own noise
        /// falls well below one sample's).
        public var referenceSeconds: Double
        /// At rest, a reference acceleration this far from the sample last handed over is handed
        /// over, m/s² (default 0.2: a tilt of 1.2°, four times a phone's 0.05 m/s² noise per axis).
        public var accelerationDriftMetresPerSecondSquared: Double
        /// At rest, a reference field this far from the sample last handed over is handed over,
        /// microtesla (default 1.2: a turn of about 3.5° of a 20 µT horizontal field, so the heading
        /// at rest stays within about that; a nudge of 5°, 1.7 µT, is handed over within 2 s, when
        /// the reference (time constant ``referenceSeconds``) has followed it. With 0.4 µT of noise
        /// per axis about one resting period in 180 is handed over for nothing, RestHandOverTests).
        public var fieldDriftMicrotesla: Double

        public init(accelerationThresholdMetresPerSecondSquared: Double = 0.35, fieldThresholdMicrotesla: Double = 3,
                    restAfterSeconds: Double = 2, restAfterSecondsWithoutGyroscope: Double = 1,
                    firstRestAfterSecondsWithoutGyroscope: Double = 0.5, firstRestAfterSeconds: Double? = nil,
                    referenceSeconds: Double = 1,
                    accelerationDriftMetresPerSecondSquared: Double = 0.2, fieldDriftMicrotesla: Double = 1.2) {
            self.restAfterSecondsWithoutGyroscope = restAfterSecondsWithoutGyroscope
            self.firstRestAfterSecondsWithoutGyroscope = firstRestAfterSecondsWithoutGyroscope
            self.firstRestAfterSeconds = firstRestAfterSeconds
            self.referenceSeconds = referenceSeconds
            self.accelerationDriftMetresPerSecondSquared = accelerationDriftMetresPerSecondSquared
            self.fieldDriftMicrotesla = fieldDriftMicrotesla
            self.accelerationThresholdMetresPerSecondSquared = accelerationThresholdMetresPerSecondSquared
            self.fieldThresholdMicrotesla = fieldThresholdMicrotesla
            self.restAfterSeconds = restAfterSeconds
        }

        /// This configuration for a phone with or without a gyroscope read: without one, a rest
        /// begins after ``restAfterSecondsWithoutGyroscope`` (if shorter), and after
        /// ``firstRestAfterSecondsWithoutGyroscope`` while the phone has not moved since the start.
        public func forPhone(hasGyroscope: Bool) -> Configuration {
            guard !hasGyroscope else { return self }
            var configuration = self
            configuration.restAfterSeconds = min(restAfterSeconds, restAfterSecondsWithoutGyroscope)
            configuration.firstRestAfterSeconds = min(configuration.restAfterSeconds, firstRestAfterSecondsWithoutGyroscope)
            return configuration
        }
    }

    public let configuration: Configuration
    /// True while the phone rests.
    public private(set) var isResting = false
    private var referenceAcceleration: Vector3?
    private var referenceField: Vector3?
    private var accelerationTime = 0.0, fieldTime = 0.0
    private var stillSince: Double?
    /// Motion seen since the first sample (or since ``reset()``).
    private var movedSinceStart = false
    /// The samples last handed over: what the heading holds. (Not the references then: a
    /// reference lags a nudge, and the rest of the nudge would never be handed over.)
    private var handedOverAcceleration: Vector3?
    private var handedOverField: Vector3?
    /// The newest samples.
    private var lastAcceleration: Vector3?, lastField: Vector3?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Feeds an accelerometer sample (m/s², device frame) taken at `time` seconds; returns whether
    /// the phone rests after it.
    @discardableResult
    public mutating func addAcceleration(_ a: Vector3, time: Double) -> Bool {
        guard a.isFinite, time.isFinite else { return isResting }
        let moved = referenceAcceleration.map { ($0 - a).length > configuration.accelerationThresholdMetresPerSecondSquared } ?? true
        let first = referenceAcceleration == nil
        referenceAcceleration = moved ? a : Self.mean(referenceAcceleration, a, dt: time - accelerationTime,
                                                         tau: configuration.referenceSeconds)
        accelerationTime = time
        lastAcceleration = a
        return update(moved: moved, first: first, time: time)
    }

    /// Feeds a magnetometer sample (microtesla, device frame) taken at `time` seconds; returns
    /// whether the phone rests after it.
    @discardableResult
    public mutating func addField(_ m: Vector3, time: Double) -> Bool {
        guard m.isFinite, time.isFinite else { return isResting }
        let moved = referenceField.map { ($0 - m).length > configuration.fieldThresholdMicrotesla } ?? true
        let first = referenceField == nil
        referenceField = moved ? m : Self.mean(referenceField, m, dt: time - fieldTime, tau: configuration.referenceSeconds)
        fieldTime = time
        lastField = m
        return update(moved: moved, first: first, time: time)
    }

    /// One step of the exponential mean with time constant `tau` (seconds) after `dt` seconds.
    private static func mean(_ reference: Vector3?, _ sample: Vector3, dt: Double, tau: Double) -> Vector3 {
        guard let reference else { return sample }
        let weight = dt > 0 && tau > 0 ? 1 - exp(-dt / tau) : 1
        return reference + (sample - reference) * min(1, max(0, weight))
    }

    /// - Parameter first: the sensor's first sample (it "moves" from nothing, which is no motion).
    private mutating func update(moved: Bool, first: Bool, time: Double) -> Bool {
        let backwards = stillSince.map { time < $0 } ?? false
        if (moved && !first) || backwards { movedSinceStart = true }
        if moved || backwards || stillSince == nil {
            // Motion, the first sample, or time running backwards: start a new still stretch.
            stillSince = time
            isResting = false
        } else if let since = stillSince, time - since >= restAfterSeconds {
            isResting = true
        }
        return isResting
    }

    /// ``Configuration/restAfterSeconds``, or ``Configuration/firstRestAfterSeconds`` while the
    /// phone has not moved since the start.
    private var restAfterSeconds: Double {
        guard !movedSinceStart, let first = configuration.firstRestAfterSeconds else { return configuration.restAfterSeconds }
        return min(first, configuration.restAfterSeconds)
    }

    /// Whether the samples added since the last call should go on to the heading: always while the
    /// phone moves; at rest only when a reference is further from the sample last handed over than
    /// ``Configuration/accelerationDriftMetresPerSecondSquared`` or
    /// ``Configuration/fieldDriftMicrotesla``. A true answer takes the newest samples as the ones
    /// handed over. Call it once per sampling period, after that period's samples.
    public mutating func shouldHandOver() -> Bool {
        func drifted(_ reference: Vector3?, from handedOver: Vector3?, by threshold: Double) -> Bool {
            guard let reference else { return false }
            guard let handedOver else { return true }
            return (reference - handedOver).length > threshold
        }
        let handOver = !isResting
            || drifted(referenceAcceleration, from: handedOverAcceleration, by: configuration.accelerationDriftMetresPerSecondSquared)
            || drifted(referenceField, from: handedOverField, by: configuration.fieldDriftMicrotesla)
        if handOver {
            handedOverAcceleration = lastAcceleration
            handedOverField = lastField
        }
        return handOver
    }

    /// The accelerometer's own motion event fired at `time` seconds (issue 37: a phone resting on
    /// the event is not read at all): the rest ends at once and a new still stretch starts, as
    /// after a sample that moved. The references stay: the next samples tell how far it moved.
    public mutating func motionReported(time: Double) {
        guard time.isFinite else { return }
        stillSince = time
        movedSinceStart = true
        isResting = false
    }

    /// Forgets everything (the sensors restarted).
    public mutating func reset() { self = RestDetector(configuration: configuration) }
}
