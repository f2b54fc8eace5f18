import QiblaCore

/// The compass as clients see it: everything in the compass group but the values derived from
/// the location (true heading, the turn to the Qibla), which ``DaemonModel`` adds.
public struct CompassState: Sendable, Equatable {
    /// A magnetometer and an accelerometer are open.
    public var hasCompass = false
    /// Smoothed magnetic heading of ``axis``, degrees in [0, 360); NaN when unknown.
    public var magneticHeadingDegrees = Double.nan
    public var axis = HeadingAxis.none
    /// One-sigma heading error estimate, degrees; NaN when unknown.
    public var headingErrorDegrees = Double.nan
    public var accuracy = CompassAccuracy.unknown
    public var magneticInterference = false
    public var calibrationNeeded = false
    /// 0 to 1.
    public var calibrationProgress = 0.0

    public init() {}

    /// Forgets the heading (sensors stopped, vanished, or samples rejected for too long).
    mutating func withdrawHeading(accuracy: CompassAccuracy, axis: HeadingAxis? = HeadingAxis.none) {
        magneticHeadingDegrees = .nan
        headingErrorDegrees = .nan
        self.accuracy = accuracy
        if let axis { self.axis = axis }
    }
}

/// Turns IIO samples into ``CompassState`` through QiblaCore's `HeadingPipeline` and accuracy
/// estimate, with the daemon's policies: the heading is withdrawn after ``Configuration/rejectionGraceSeconds``
/// of rejected samples, and the WMM caution/blackout zones and a missing location cap the accuracy.
///
/// Pure: samples carry their own time (seconds, the sensor's monotonic clock); the expected
/// Earth field at the current place comes in with each sample.
public struct CompassModel: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// `smoothing-window`: circular moving-average window, seconds (0–5).
        public var smoothingWindowSeconds: Double = 0.5
        /// How long rejected samples (free fall, field parallel to gravity) may last before the
        /// heading is withdrawn, seconds.
        public var rejectionGraceSeconds: Double = 1.0

        public init() {}

        var pipeline: HeadingPipeline.Configuration {
            var c = HeadingPipeline.Configuration()
            c.smoothingWindowSeconds = smoothingWindowSeconds
            return c
        }
    }

    public enum Input: Sendable, Equatable {
        /// Sensors were found; a heading needs the accelerometer too (tilt compensation).
        case sensorsAvailable(hasAccelerometer: Bool)
        /// No usable magnetometer (absent, vanished, failing).
        case sensorsUnavailable
        /// The last claim went: the sensors were stopped.
        case stopped
        /// An accelerometer sample, m/s² in the device frame (mount matrix applied).
        case acceleration(Vector3)
        /// A magnetometer sample, microtesla in the device frame, at `timeSeconds`.
        case magneticField(Vector3, timeSeconds: Double)
    }

    public private(set) var configuration: Configuration
    public private(set) var state = CompassState()
    private var pipeline: HeadingPipeline
    private var latestAcceleration: Vector3?
    private var rejectionStreakStartSeconds: Double?
    /// The reason of the most recent rejected sample (nil after an accepted one), for logs.
    public private(set) var lastRejection: HeadingRejection?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        pipeline = HeadingPipeline(configuration: configuration.pipeline)
    }

    /// New settings; the magnetometer calibration is kept, the smoothing window restarts.
    public mutating func reconfigure(_ configuration: Configuration) {
        guard configuration != self.configuration else { return }
        let calibration = pipeline.calibration
        self.configuration = configuration
        pipeline = HeadingPipeline(configuration: configuration.pipeline)
        pipeline.setCalibration(calibration)
    }

    /// Applies one input. `expectedField` is the WMM field at the current place (nil when no
    /// location is known).
    public mutating func apply(_ input: Input, expectedField: MagneticField?) {
        switch input {
        case .sensorsAvailable(let hasAccelerometer):
            state.hasCompass = hasAccelerometer
        case .sensorsUnavailable:
            resetSamples()
            state.hasCompass = false
            state.withdrawHeading(accuracy: .unknown)
        case .stopped:
            resetSamples()
            state.withdrawHeading(accuracy: .unknown)
            state.magneticInterference = false
        case .acceleration(let vector):
            latestAcceleration = vector
        case .magneticField(let vector, let time):
            guard let acceleration = latestAcceleration else { return }
            switch pipeline.update(magnetic: vector, acceleration: acceleration, time: time) {
            case .success(let estimate):
                rejectionStreakStartSeconds = nil
                lastRejection = nil
                publish(estimate, expectedField: expectedField)
            case .failure(let reason):
                lastRejection = reason
                let start = rejectionStreakStartSeconds ?? time
                rejectionStreakStartSeconds = start
                if time - start >= configuration.rejectionGraceSeconds {
                    state.withdrawHeading(accuracy: .unreliable, axis: nil)
                }
            }
        }
    }

    private mutating func resetSamples() {
        pipeline.reset()
        latestAcceleration = nil
        rejectionStreakStartSeconds = nil
    }

    private mutating func publish(_ estimate: HeadingEstimate, expectedField field: MagneticField?) {
        let (accuracy, error, interference) = estimateAccuracy(
            spreadDegrees: estimate.spreadDegrees,
            measuredFieldMicrotesla: estimate.fieldStrengthMicrotesla,
            expectedFieldMicrotesla: field.map { $0.totalNanotesla / 1000 },
            measuredInclinationDegrees: estimate.inclinationDegrees,
            expectedInclinationDegrees: field?.inclinationDegrees,
            calibrated: pipeline.calibration != .identity)
        state.hasCompass = true
        state.magneticHeadingDegrees = estimate.magneticHeadingDegrees
        state.axis = estimate.axis
        state.headingErrorDegrees = error
        state.accuracy = Self.cappedAccuracy(accuracy, zone: field?.zone)
        state.magneticInterference = interference
    }

    /// The WMM blackout and caution zones (H < 2000 nT / < 6000 nT, WMM2025 technical report §
    /// "Blackout zones") make a magnetic compass unreliable or poor there; with no location there is
    /// no declination, so the true heading is no better than `low` (`zone` nil).
    public static func cappedAccuracy(_ accuracy: CompassAccuracy, zone: MagneticZone?) -> CompassAccuracy {
        switch zone {
        case .blackout?: return .unreliable
        case .caution?, nil: return accuracy == .high || accuracy == .medium ? .low : accuracy
        case .normal?: return accuracy
        }
    }
}
