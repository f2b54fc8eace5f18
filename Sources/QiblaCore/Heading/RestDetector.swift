// SPDX-License-Identifier: Apache-2.0
/// Tells a phone lying still from one that moves, from the accelerometer and the magnetometer
/// against their own noise, so that the sensors can be read slowly while nothing changes (issue 25).
///
/// Pure, no clock: the caller passes each sample with its time. The detector keeps a reference
/// per sensor, the mean of the current still stretch (each sample weighted equally until the
/// stretch is `referenceSeconds` long, then exponentially with that time constant); a sample whose acceleration differs from it by more than
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
/// sampler to pass a period on only when a reference moved from the value last passed on by more
/// than its drift threshold (a nudge or a turn too small or too slow to count as motion still
/// reaches the heading once the reference has followed it; nothing else wakes the pipeline or the
/// bus). What goes on at rest is a mean, not the period's own samples (``restingAcceleration``,
/// ``restingField``): the heading's window (0.5 s) holds one period at 2 Hz, and one sample's
/// heading is degrees off at a high dip (0.5 µT against Reykjavik's 12 µT horizontal field is
/// 2.3°). A drift must also stand out of the drift's own noise
/// (``Configuration/driftSigmas``, each sensor's noise measured from its still samples),
/// or a sensor noisier than the thresholds assume hands over noise. A drift hands the reference
/// over (the exponential mean follows the change), and
/// ``Configuration/settleSamples`` samples later the plain mean of the samples since then (the
/// reference at 2 Hz still carries half a sample's noise); the rest of the time the value last
/// passed on is the mean of the still stretch that led to the rest.
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
        /// At rest, a reference acceleration this far from the one last handed over is handed
        /// over, m/s² (default 0.2: a tilt of 1.2°, four times a phone's 0.05 m/s² noise per axis).
        public var accelerationDriftMetresPerSecondSquared: Double
        /// At rest, a reference field this far from the one last handed over is handed over,
        /// microtesla (default 1.2: a turn of about 3.5° of a 20 µT horizontal field; a nudge of
        /// 5°, 1.7 µT, is handed over within 2 s, when the reference (time constant
        /// ``referenceSeconds``) has followed it. The references are means, so noise alone seldom
        /// moves them that far: RestHandOverTests counts the periods handed over for nothing).
        public var fieldDriftMicrotesla: Double
        /// Samples after a drift's hand-over at rest when the plain mean of the samples since is
        /// handed over (default 8: 4 s at 2 Hz; its noise a third of a sample's).
        public var settleSamples: Int
        /// A drift must also exceed this many sigmas of the difference between the reference and
        /// the value last handed over, the sigmas from each sensor's own noise as measured over its
        /// still samples (default 4: Gaussian noise alone then moves a reference that far in about one
        /// period of a thousand; 0 turns it off). The drift thresholds above assume a phone's
        /// noise (0.05 m/s², 0.4 µT); a noisier sensor's references wander further: BROAD's
        /// magnetometer (0.62 µT per axis, heavy-tailed) handed over 4-reading means 1.2 µT off
        /// every few seconds at rest (trial 03 at 170.5 s: 4.4° off for 2.5 s, with `HeadingError` 1.9°).
        public var driftSigmas: Double
        /// The settled mean after a drift's hand-over at rest is pooled with what was held before
        /// the drift when the two are within this many sigmas of their difference's own noise
        /// (default 3, per axis, the difference's length: Gaussian noise alone goes beyond in about
        /// 3 % of rests; 0 never pools). Drifts are sought at every rest read, so over a long rest
        /// the reference's noise now and then passes ``driftSigmas``: the settled mean then shows
        /// no change, and pooling gives back the rest's long mean (BROAD, 48 Hz, the heading RMSE
        /// over the rests' instants of the 30 trials pooled 1.77° → 1.73°; trial 34 2.11° → 0.95°,
        /// trial 14 1.15° → 0.85°; trial 02 1.01° → 1.12°, whose first rest's mean was 1.2° off a
        /// change too small for the test, 0.35 µT; RestDetectorTests). A change smaller than the
        /// test's reach is then averaged with the pose before it, as it was before the drift.
        public var poolingSigmas: Double

        public init(accelerationThresholdMetresPerSecondSquared: Double = 0.35, fieldThresholdMicrotesla: Double = 3,
                    restAfterSeconds: Double = 2, restAfterSecondsWithoutGyroscope: Double = 1,
                    firstRestAfterSecondsWithoutGyroscope: Double = 0.5, firstRestAfterSeconds: Double? = nil,
                    referenceSeconds: Double = 1,
                    accelerationDriftMetresPerSecondSquared: Double = 0.2, fieldDriftMicrotesla: Double = 1.2,
                    settleSamples: Int = 8, driftSigmas: Double = 4, poolingSigmas: Double = 3) {
            self.settleSamples = max(1, settleSamples)
            self.poolingSigmas = poolingSigmas.isFinite ? max(0, poolingSigmas) : 0
            self.driftSigmas = driftSigmas.isFinite ? max(0, driftSigmas) : 0
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
    /// Each sensor's latest sample's distance from its reference, over the sensor's motion
    /// threshold (0 before a reference; above 1 the sample was motion).
    private var accelerationDeparture = 0.0, fieldDeparture = 0.0

    /// The latest samples came near both motion thresholds at once: neither crossed its own, but
    /// √(rₐ² + rₘ²) > 1 for their departures rₐ, rₘ (each a distance from its reference over its
    /// threshold). A hand that starts to turn a phone moves both a little before either crosses;
    /// noise seldom moves both (two independent departures, each a few of its own sigmas below
    /// its threshold). The sampler reads such a rest read again at the full rate instead of
    /// waiting a rest period to see the turn (BROAD trial 05 at 2 Hz: the read at 125.39 s was
    /// 2.29 µT from its reference, 0.76 of the field's threshold, and 0.245 m/s², 0.70 of the
    /// acceleration's, the phone turning; the next read, 0.5 s later, woke it 5.7° from the held
    /// heading, at 3.0 `HeadingError`s).
    public var isNearMotion: Bool {
        accelerationDeparture < 1 && fieldDeparture < 1
            && accelerationDeparture * accelerationDeparture + fieldDeparture * fieldDeparture > 1
    }
    private var referenceAcceleration: Vector3?
    private var referenceField: Vector3?
    private var accelerationTime = 0.0, fieldTime = 0.0
    private var stillSince: Double?
    /// Motion seen since the first sample (or since ``reset()``).
    private var movedSinceStart = false
    /// The values last handed over: what the heading holds.
    private var handedOverAcceleration: Vector3?
    private var handedOverField: Vector3?
    /// How many samples the field handed over is the mean of.
    private var handedOverFieldCount = 0
    /// Samples in each reference's mean since it was last set by motion.
    private var accelerationCount = 0, fieldCount = 0
    /// The weight the field's reference gave its last sample (1 when motion set it); the same
    /// for the acceleration's.
    private var fieldWeight = 1.0, accelerationWeight = 1.0
    /// Each sensor's noise per axis, measured over its samples since it last moved (the still
    /// stretch that leads to a rest, then the rest's reads; ``Configuration/driftSigmas``): what a
    /// hand's jitter below the motion threshold added before is not kept into the rest.
    private var accelerationNoise = NoiseEstimate(), fieldNoise = NoiseEstimate()
    /// How many samples the acceleration handed over is the mean of.
    private var handedOverAccelerationCount = 0
    /// The plain means of the samples since the last motion or drift hand-over, and their counts.
    private var settledAcceleration = RunningMean(), settledField = RunningMean()
    /// A drift was handed over at rest; the settled mean follows when it has enough samples.
    private var settleDue = false
    /// What had been handed over before the first of a rest's drifts since the last settled
    /// hand-over (`driftPending`): the settled means are compared with it.
    private var accelerationBeforeDrift: HeldMean?, fieldBeforeDrift: HeldMean?
    private var driftPending = false
    /// A mean handed over and how many samples it is of.
    private struct HeldMean: Sendable, Equatable {
        var value: Vector3
        var count: Int
    }
    /// The current rest's first resting period has been handed over.
    private var restAnnounced = false
    /// The phone rested at the last ``shouldHandOver()`` call (the period that begins a rest is
    /// read at the full rate and goes on whole; the next one is the rest's first).
    private var restingAtLastCall = false

    /// A plain mean of up to ``limit`` samples (then exponential, so a very slow change still
    /// moves it).
    private struct RunningMean: Sendable, Equatable {
        static let limit = 64
        var mean: Vector3?
        var count = 0
        mutating func restart(_ value: Vector3?) { mean = value; count = value == nil ? 0 : 1 }
        mutating func add(_ sample: Vector3) {
            count = min(count + 1, Self.limit)
            mean = mean.map { $0 + (sample - $0) / Double(count) } ?? sample
        }
    }

    /// A sensor's noise variance per axis, from the differences of still samples at least
    /// ``spacingSeconds`` apart: E|xₖ − xⱼ|² = 6σ² for independent samples. Samples closer
    /// together can share a chip's output period (a chip read faster than it measures repeats its
    /// value; BROAD's still magnetometer at 48 Hz gives 0.62 µT from neighbours and from samples
    /// 0.5 s apart alike, trial 07 at 146–163 s). Differences, not
    /// distances to the reference: a nudge below the motion threshold moves one difference, but
    /// every distance to the reference until the reference has followed it, and would read as
    /// noise that hides the next nudge. A plain mean over the first ``RunningMean/limit``
    /// differences, then exponential.
    private struct NoiseEstimate: Sendable, Equatable {
        static let spacingSeconds = 0.1
        var variance = 0.0
        var count = 0
        var previous: Vector3?
        var previousTime = 0.0
        mutating func add(_ sample: Vector3, time: Double) {
            guard let previous, time >= previousTime else { (self.previous, previousTime) = (sample, time); return }
            guard time - previousTime >= Self.spacingSeconds else { return }
            (self.previous, previousTime) = (sample, time)
            let difference = sample - previous
            let value = difference.dot(difference) / 6
            guard value.isFinite else { return }
            count = min(count + 1, RunningMean.limit)
            variance += (value - variance) / Double(count)
        }
        /// The sigma of the difference between two means of `a` and `b` samples, per axis.
        func differenceSigma(_ a: Int, _ b: Int) -> Double {
            guard count > 0 else { return 0 }
            return (variance * (1 / Double(max(1, a)) + 1 / Double(max(1, b)))).squareRoot()
        }
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Feeds an accelerometer sample (m/s², device frame) taken at `time` seconds; returns whether
    /// the phone rests after it.
    @discardableResult
    public mutating func addAcceleration(_ a: Vector3, time: Double) -> Bool {
        guard a.isFinite, time.isFinite else { return isResting }
        let moved = referenceAcceleration.map { ($0 - a).length > configuration.accelerationThresholdMetresPerSecondSquared } ?? true
        accelerationDeparture = referenceAcceleration.map {
            Self.departure(($0 - a).length, threshold: configuration.accelerationThresholdMetresPerSecondSquared)
        } ?? 0
        let first = referenceAcceleration == nil
        if moved { accelerationNoise = NoiseEstimate() }
        accelerationNoise.add(a, time: time)
        accelerationCount = moved ? 1 : accelerationCount + 1
        (referenceAcceleration, accelerationWeight) = moved ? (a, 1)
            : Self.mean(referenceAcceleration, a, count: accelerationCount, dt: time - accelerationTime, tau: configuration.referenceSeconds)
        if moved { settledAcceleration.restart(a) } else { settledAcceleration.add(a) }
        accelerationTime = time
        return update(moved: moved, first: first, time: time)
    }

    /// Feeds a magnetometer sample (microtesla, device frame) taken at `time` seconds; returns
    /// whether the phone rests after it.
    @discardableResult
    public mutating func addField(_ m: Vector3, time: Double) -> Bool {
        guard m.isFinite, time.isFinite else { return isResting }
        let moved = referenceField.map { ($0 - m).length > configuration.fieldThresholdMicrotesla } ?? true
        fieldDeparture = referenceField.map { Self.departure(($0 - m).length, threshold: configuration.fieldThresholdMicrotesla) } ?? 0
        let first = referenceField == nil
        if moved { fieldNoise = NoiseEstimate() }
        fieldNoise.add(m, time: time)
        fieldCount = moved ? 1 : fieldCount + 1
        (referenceField, fieldWeight) = moved ? (m, 1) : Self.mean(referenceField, m, count: fieldCount, dt: time - fieldTime,
                                                                   tau: configuration.referenceSeconds)
        if moved { settledField.restart(m) } else { settledField.add(m) }
        fieldTime = time
        return update(moved: moved, first: first, time: time)
    }

    /// A distance over its motion threshold (infinite beyond a threshold of 0 or less).
    private static func departure(_ distance: Double, threshold: Double) -> Double {
        threshold > 0 ? distance / threshold : (distance > 0 ? .infinity : 0)
    }

    /// One step of the mean: the `count`-th sample of the stretch weighs 1/`count` (the plain
    /// mean) until the exponential mean's weight after `dt` seconds with time constant `tau` is
    /// larger. (An exponential mean from the stretch's first sample would keep e⁻¹ of that one
    /// sample after `tau`, and its noise with it.) Returns the new mean and the weight it gave the sample.
    private static func mean(_ reference: Vector3?, _ sample: Vector3, count: Int, dt: Double, tau: Double) -> (mean: Vector3, weight: Double) {
        guard let reference else { return (sample, 1) }
        let exponential = dt > 0 && tau > 0 ? 1 - exp(-dt / tau) : 1
        let weight = min(1, max(0, max(exponential, 1 / Double(max(1, count)))))
        return (reference + (sample - reference) * weight, weight)
    }

    /// How many samples a reference is worth: its count while it is a plain mean, then the
    /// exponential mean's equivalent, (2 − w)/w for weight w (the ratio of a sample's variance to
    /// the mean's), capped at 64.
    private static func equivalentCount(count: Int, weight: Double) -> Int {
        let equivalent = weight > 0 ? (2 - weight) / weight : Double(count)
        return max(1, min(count, RunningMean.limit, Int(equivalent.rounded())))
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
    /// phone moves; at rest when a reference is further from the value last handed over than
    /// ``Configuration/accelerationDriftMetresPerSecondSquared`` or
    /// ``Configuration/fieldDriftMicrotesla`` (the references are handed over),
    /// ``Configuration/settleSamples`` samples after such a drift (the plain means since it), and
    /// once in the rest's first period (the plain means of the still stretch). At
    /// rest the caller passes ``restingAcceleration`` and ``restingField`` on in place of the
    /// period's own samples. Call it once per sampling period, after that period's samples.
    public mutating func shouldHandOver() -> Bool {
        // Beyond the configured threshold and, at rest, beyond `driftSigmas` of the difference's
        // own noise (its length over √3 per-axis sigmas: χ with 3 degrees of freedom).
        func drifted(_ reference: Vector3?, from handedOver: Vector3?, by threshold: Double, sigma: Double) -> Bool {
            guard let reference else { return false }
            guard let handedOver else { return true }
            let distance = (reference - handedOver).length
            return distance > threshold && (!isResting || distance > configuration.driftSigmas * sigma)
        }
        let accelerationSigma = accelerationNoise.differenceSigma(
            Self.equivalentCount(count: accelerationCount, weight: accelerationWeight), handedOverAccelerationCount)
        let fieldSigma = fieldNoise.differenceSigma(Self.equivalentCount(count: fieldCount, weight: fieldWeight), handedOverFieldCount)
        // A rest's first period goes on once, as the still stretch's plain means: what the heading
        // holds from then on, and one more sample for whatever counts time in the stream (the
        // interference detector asks for a calibration after 0.5 s of mismatching samples, and a
        // first rest after 0.5 s left it on that edge: FirstRestTests).
        defer { restingAtLastCall = isResting }
        if isResting, restingAtLastCall, !restAnnounced {
            restAnnounced = true
            settleDue = false
            handOver(acceleration: settledAcceleration.mean.map { ($0, settledAcceleration.count) }, field: settledField.mean.map { ($0, settledField.count) })
            return true
        }
        if !isResting { restAnnounced = false; driftPending = false }
        if !isResting || drifted(referenceAcceleration, from: handedOverAcceleration, by: configuration.accelerationDriftMetresPerSecondSquared,
                                 sigma: accelerationSigma)
            || drifted(referenceField, from: handedOverField, by: configuration.fieldDriftMicrotesla, sigma: fieldSigma) {
            if isResting, !driftPending {
                driftPending = true
                accelerationBeforeDrift = handedOverAcceleration.map { HeldMean(value: $0, count: handedOverAccelerationCount) }
                fieldBeforeDrift = handedOverField.map { HeldMean(value: $0, count: handedOverFieldCount) }
            }
            handOver(acceleration: referenceAcceleration.map { ($0, Self.equivalentCount(count: accelerationCount, weight: accelerationWeight)) },
                     field: referenceField.map { ($0, Self.equivalentCount(count: fieldCount, weight: fieldWeight)) },
                     keepingMissing: false)
            // At rest a drift restarts the plain means from the references (the samples before
            // it were of the old pose); while moving they run from the last motion on.
            if isResting {
                settledAcceleration.restart(referenceAcceleration)
                settledField.restart(referenceField)
            }
            settleDue = isResting
            return true
        }
        let settledCount = min(settledAcceleration.mean == nil ? Int.max : settledAcceleration.count,
                               settledField.mean == nil ? Int.max : settledField.count)
        if settleDue, settledCount != Int.max, settledCount > configuration.settleSamples {
            settleDue = false
            // A settled mean within ``Configuration/poolingSigmas`` of what was held before the
            // drift shows the drift was the reference's noise: a reference is the mean of about
            // four rest reads, and over a long rest it now and then strays beyond the drift test
            // (BROAD trial 14 at 22.2 s: a 1.3 µT drift handed over, the heading 2.3° off for
            // 4 s, then the settled mean 1.3° off for 16 s; that mean was 0.43 µT, 2σ, from the
            // 64 reads before the drift). The two are then pooled, so the rest's long mean is
            // not lost to a stray reference.
            let pending = driftPending
            driftPending = false
            func settledOrPooled(_ settled: RunningMean, _ before: HeldMean?, noise: NoiseEstimate) -> (Vector3, Int)? {
                guard let mean = settled.mean else { return nil }
                guard pending, let before,
                      (mean - before.value).length <= configuration.poolingSigmas * noise.differenceSigma(settled.count, before.count)
                else { return (mean, settled.count) }
                let count = settled.count + before.count
                return (before.value + (mean - before.value) * (Double(settled.count) / Double(count)), min(count, RunningMean.limit))
            }
            handOver(acceleration: settledOrPooled(settledAcceleration, accelerationBeforeDrift, noise: accelerationNoise),
                     field: settledOrPooled(settledField, fieldBeforeDrift, noise: fieldNoise))
            return true
        }
        return false
    }

    /// Records what goes on: the means, and how many samples the field's is of. A missing value
    /// keeps what was handed over before, unless `keepingMissing` is false (then the reference's
    /// own absence).
    private mutating func handOver(acceleration: (Vector3, Int)?, field: (Vector3, Int)?, keepingMissing: Bool = true) {
        if let acceleration {
            (handedOverAcceleration, handedOverAccelerationCount) = (acceleration.0, max(1, acceleration.1))
        } else if !keepingMissing {
            (handedOverAcceleration, handedOverAccelerationCount) = (nil, 0)
        }
        if let field {
            (handedOverField, handedOverFieldCount) = (field.0, max(1, field.1))
        } else if !keepingMissing {
            (handedOverField, handedOverFieldCount) = (nil, 0)
        }
    }

    /// What a resting period hands over in place of its own acceleration sample, m/s² (nil before
    /// the first sample): the value ``shouldHandOver()`` last chose.
    public var restingAcceleration: Vector3? { handedOverAcceleration }

    /// What a resting period hands over in place of its own field sample, µT (nil before the
    /// first sample): the value ``shouldHandOver()`` last chose.
    public var restingField: Vector3? { handedOverField }

    /// How many samples ``restingAcceleration`` is the mean of (capped at 64; 0 before the
    /// first; 1 for the sample that ended a rest by moving).
    public var restingAccelerationSampleCount: Int { handedOverAccelerationCount }

    /// How many samples ``restingField`` is the mean of (capped at 64; 0 before the first): the
    /// heading's smoothing window takes the mean in place of the samples it holds
    /// (`HeadingPipeline.update(magnetic:acceleration:time:meanOfSamples:)`).
    public var restingFieldSampleCount: Int { handedOverFieldCount }

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
