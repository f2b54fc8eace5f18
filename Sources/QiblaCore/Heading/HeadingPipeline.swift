// SPDX-License-Identifier: Apache-2.0
/// One smoothed compass reading, produced by `HeadingPipeline.update`.
public struct HeadingEstimate: Sendable, Equatable {
    /// Smoothed magnetic heading of `axis`, degrees clockwise from magnetic north in [0, 360).
    public var magneticHeadingDegrees: Double
    /// The device direction the heading refers to (`.top` or `.back`; never `.none` here).
    public var axis: HeadingAxis
    /// Tilt from flat of this sample, degrees in [0, 180] (0 face-up, 90 upright).
    public var tiltDegrees: Double
    /// Top-edge elevation of this sample, degrees (see `DeviceOrientation.pitchDegrees`).
    public var pitchDegrees: Double
    /// Roll of this sample, degrees (see `DeviceOrientation.rollDegrees`).
    public var rollDegrees: Double
    /// Circular standard deviation of the headings in the smoothing window, degrees (0 for a
    /// single sample).
    public var spreadDegrees: Double
    /// Mean calibrated field strength |m| over the window, microtesla.
    public var fieldStrengthMicrotesla: Double
    /// Mean measured dip angle over the window, degrees, positive down.
    public var inclinationDegrees: Double
    /// Unsmoothed heading of this sample, degrees in [0, 360).
    public var instantaneousHeadingDegrees: Double
    /// Number of samples in the smoothing window.
    public var sampleCount: Int
    /// Time of the sample, seconds (as passed to `update`).
    public var time: Double
    /// RMS over the window of |a| − g₀, m/s²: how hard the hand accelerates the phone (0 at rest
    /// but for the accelerometer's noise). The same linear acceleration across the axis of the
    /// reading tilts the apparent vertical.
    public var accelerationDeviationMetresPerSecondSquared: Double = 0
}

/// The per-sample compass engine the daemon feeds with paired magnetometer and accelerometer
/// samples: calibration → tilt compensation (`TiltCompensation`) → axis choice with hysteresis
/// (`HeadingAxisSelector`) → circular smoothing over a time window (`CircularSmoother`).
///
/// Pure: no clock, no I/O; the caller passes the sample time in seconds. The smoothing window is
/// cleared when the published axis changes, when the calibration changes and on time running
/// backwards. A rejected sample does not disturb the window.
public struct HeadingPipeline: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Length of the smoothing window, seconds.
        public var smoothingWindowSeconds: Double
        /// A sample farther than this (degrees) from the smoothed heading restarts the window.
        public var smoothingResetTurnDegrees: Double
        /// Ring-buffer size of the smoothing window (samples).
        public var smoothingCapacity: Int
        /// Mean resultant length below which the smoothed heading is undefined.
        public var minimumResultantLength: Double
        /// Folded tilt (degrees) above which the heading switches from the top edge to the back camera.
        public var switchToBackAboveTiltDegrees: Double
        /// Folded tilt (degrees) below which the heading switches back to the top edge.
        public var switchToTopBelowTiltDegrees: Double
        /// Minimum sine of the angle between field and gravity (see `TiltCompensation`).
        public var minimumFieldGravitySine: Double
        /// Magnetometer correction applied to every raw sample.
        public var calibration: MagnetometerCalibration

        public init(smoothingWindowSeconds: Double = 0.5,
                    smoothingResetTurnDegrees: Double = 30,
                    smoothingCapacity: Int = 256,
                    minimumResultantLength: Double = 1e-3,
                    switchToBackAboveTiltDegrees: Double = 55,
                    switchToTopBelowTiltDegrees: Double = 45,
                    minimumFieldGravitySine: Double = TiltCompensation.defaultMinimumFieldGravitySine,
                    calibration: MagnetometerCalibration = .identity) {
            self.smoothingWindowSeconds = smoothingWindowSeconds
            self.smoothingResetTurnDegrees = smoothingResetTurnDegrees
            self.smoothingCapacity = smoothingCapacity
            self.minimumResultantLength = minimumResultantLength
            self.switchToBackAboveTiltDegrees = switchToBackAboveTiltDegrees
            self.switchToTopBelowTiltDegrees = switchToTopBelowTiltDegrees
            self.minimumFieldGravitySine = minimumFieldGravitySine
            self.calibration = calibration
        }
    }

    private struct FieldSample: Sendable { var strength: Double; var inclination: Double; var accelerationDeviation2: Double }

    public private(set) var configuration: Configuration
    private var selector: HeadingAxisSelector
    private var smoother: CircularSmoother
    private var fieldWindow: TimedRing<FieldSample>
    /// The orientation computed from the last accepted sample.
    public private(set) var lastOrientation: DeviceOrientation?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        selector = HeadingAxisSelector(
            switchToBackAboveTiltDegrees: configuration.switchToBackAboveTiltDegrees,
            switchToTopBelowTiltDegrees: configuration.switchToTopBelowTiltDegrees)
        smoother = CircularSmoother(configuration: .init(
            windowSeconds: configuration.smoothingWindowSeconds,
            resetTurnDegrees: configuration.smoothingResetTurnDegrees,
            minimumResultantLength: configuration.minimumResultantLength,
            capacity: configuration.smoothingCapacity))
        fieldWindow = TimedRing(capacity: max(1, configuration.smoothingCapacity),
                                filler: FieldSample(strength: 0, inclination: 0, accelerationDeviation2: 0))
    }

    /// The calibration in use.
    public var calibration: MagnetometerCalibration { configuration.calibration }

    /// The axis currently selected (`.none` before the first accepted sample).
    public var axis: HeadingAxis { selector.axis }

    /// Replaces the magnetometer calibration (e.g. after an online fit) and, unless
    /// `restartingWindow` is false, clears the window. A provisional estimate that moves a little
    /// every second keeps the window: its older headings age out within the window's length.
    public mutating func setCalibration(_ calibration: MagnetometerCalibration, restartingWindow: Bool = true) {
        guard calibration != configuration.calibration else { return }
        configuration.calibration = calibration
        if restartingWindow { reset() }
    }

    /// Forgets the window, the axis mode and the last orientation.
    public mutating func reset() {
        selector.reset()
        smoother.reset()
        fieldWindow.removeAll()
        lastOrientation = nil
    }

    /// Processes one sample pair.
    /// - Parameters:
    ///   - magnetic: raw magnetometer reading, microtesla, device frame (after the mount matrix).
    ///   - acceleration: accelerometer reading, m/s², device frame, reaction to gravity.
    ///   - time: sample time, seconds (any monotonic origin).
    ///   - meanOfSamples: how many readings `magnetic` and `acceleration` are the means of. A mean
    ///     (more than 1: what a resting phone's sensors hand over, `RestDetector`) replaces the
    ///     window: it already is the still stretch's average, and a reading from before the rest
    ///     still inside the window would weigh as much as it (at 2 Hz the last full-rate reading is
    ///     0.5 s old, on the window's edge, and one reading's heading is degrees off at a high dip).
    ///     The estimate then counts it as that many samples.
    /// - Returns: the smoothed estimate, or why this sample gives none.
    public mutating func update(magnetic: Vector3, acceleration: Vector3,
                                time: Double, meanOfSamples: Int = 1) -> Result<HeadingEstimate, HeadingRejection> {
        guard time.isFinite, magnetic.isFinite, acceleration.isFinite else {
            return .failure(.nonFiniteInput)
        }
        let field = configuration.calibration.apply(magnetic)
        let orientation: DeviceOrientation
        switch TiltCompensation.orientation(magnetic: field, acceleration: acceleration,
                                            minimumFieldGravitySine: configuration.minimumFieldGravitySine) {
        case .failure(let reason): return .failure(reason)
        case .success(let o): orientation = o
        }
        lastOrientation = orientation

        let previousAxis = selector.axis
        let axis = selector.update(tiltDegrees: orientation.tiltDegrees)
        if axis != previousAxis {
            smoother.reset()
            fieldWindow.removeAll()
        }
        guard let heading = orientation.headingDegrees(of: axis) else {
            return .failure(.headingAxisVertical(axis))
        }
        if let newest = fieldWindow.newestTime, time < newest { fieldWindow.removeAll() }
        if meanOfSamples > 1 {
            smoother.reset()
            fieldWindow.removeAll()
        }
        let mean = smoother.add(angleDegrees: heading, time: time)

        fieldWindow.removeEntries(before: time - configuration.smoothingWindowSeconds)
        let deviation = acceleration.length - TiltCompensation.standardGravity
        fieldWindow.append(time: time, value: FieldSample(strength: orientation.fieldStrengthMicrotesla,
                                                         inclination: orientation.inclinationDegrees,
                                                         accelerationDeviation2: deviation * deviation))
        guard let mean else {
            return .failure(.headingDispersed(resultantLength: smoother.resultantLength))
        }
        var strength = 0.0, inclination = 0.0, deviation2 = 0.0
        fieldWindow.forEach {
            strength += $0.value.strength; inclination += $0.value.inclination
            deviation2 += $0.value.accelerationDeviation2
        }
        let n = Double(max(1, fieldWindow.count))

        return .success(HeadingEstimate(
            magneticHeadingDegrees: mean.meanDegrees, axis: axis,
            tiltDegrees: orientation.tiltDegrees, pitchDegrees: orientation.pitchDegrees,
            rollDegrees: orientation.rollDegrees, spreadDegrees: mean.spreadDegrees,
            fieldStrengthMicrotesla: strength / n, inclinationDegrees: inclination / n,
            instantaneousHeadingDegrees: heading,
            sampleCount: mean.sampleCount == 1 ? max(1, meanOfSamples) : mean.sampleCount, time: time,
            accelerationDeviationMetresPerSecondSquared: (deviation2 / n).squareRoot()))
    }
}
