// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Which device the published heading comes from (issue 31), as ``LocationModel`` decides it for
/// positions:
///
/// - `magnetometer`: qiblad's own reading of a raw IIO magnetometer with an accelerometer —
///   calibrated here, tilt-compensated, with an honest `HeadingError`. Preferred where present.
/// - `iio-sensor-proxy`: `net.hadess.SensorProxy.Compass`, a heading computed by a HID sensor hub
///   (tablets, 2-in-1 laptops) or, in iio-sensor-proxy releases built with libssc, from a
///   Qualcomm sensor DSP's magnetometer (phones whose magnetometer is not an IIO device).
///
/// `heading-source = auto` (the default) runs the raw sensors and, only while they cannot give a
/// heading (no magnetometer, or no accelerometer beside it), iio-sensor-proxy's compass: the best
/// present source serves, and the other takes over when it goes. `magnetometer` or
/// `iio-sensor-proxy` runs and serves that source alone.
///
/// What clients see when iio-sensor-proxy serves (``published(magnetometer:)``): its heading
/// (magnetic, made true with the declination as for our own), `HeadingAxis` `top` (the direction
/// the device's top edge points, which is what a compass heading of a HID hub and libssc's
/// azimuth are), a stated `HeadingError` of ``sensorProxyHeadingErrorDegrees`` (class `low`), and
/// calibration properties that say the calibration is not qiblad's: `CalibrationNeeded` false,
/// `CalibrationHint` none, no progress, residual or offset; `CalibrationState` stays the raw
/// magnetometer's. No magnetic interference is claimed either way: iio-sensor-proxy does not say.
///
/// Pure: inputs in, state out.
public struct HeadingSourceModel: Sendable, Equatable {
    /// `heading-source`.
    public enum Selection: String, Sendable, Equatable, CaseIterable {
        case auto
        case magnetometer
        case iioSensorProxy = "iio-sensor-proxy"
    }

    public enum Input: Sendable, Equatable {
        /// The raw sensors were found (`true`: a magnetometer with an accelerometer, so a heading
        /// is possible) or are not usable (`false`).
        case magnetometer(present: Bool)
        /// iio-sensor-proxy's compass after our claim (`HasCompass`), or gone (`false`: released,
        /// vanished, refused).
        case sensorProxyCompass(present: Bool)
        /// A fresh heading from iio-sensor-proxy, degrees from magnetic north; nil: unknown.
        case sensorProxyHeading(Double?)
        /// The live sources were stopped (the last claim went): nothing is known about either.
        case stopped
    }

    /// The one-sigma error stated for iio-sensor-proxy's heading, degrees. It comes with no
    /// accuracy, calibration state or tilt: a HID hub's firmware calibrates on its own, in a
    /// state nobody reports; libssc's azimuth (libssc-sensor-compass.c) is `atan2` of the DSP's
    /// field after a pitch/roll correction, with no calibration of its own. An uncalibrated
    /// phone magnetometer's offsets (tens of µT against a horizontal field of 20–40 µT) can turn
    /// a heading by tens of degrees, a calibrated hub is within a few: 20° is stated, class `low`
    /// (15–30°), so no client mistakes it for a checked compass. A sun check
    /// (`CheckHeadingWithSun`) measures the real error.
    public static let sensorProxyHeadingErrorDegrees = 20.0

    public private(set) var selection: Selection
    /// nil until the raw sensors reported (so `auto` does not claim iio-sensor-proxy's compass
    /// for the moment the sensor discovery takes).
    public private(set) var magnetometerPresent: Bool?
    public private(set) var sensorProxyPresent = false
    /// iio-sensor-proxy's latest heading, degrees from magnetic north; NaN when unknown.
    public private(set) var sensorProxyHeadingDegrees = Double.nan

    public init(selection: Selection = .auto) {
        self.selection = selection
    }

    /// Applies an input; returns true when ``serving`` or the proxy's heading changed.
    @discardableResult
    public mutating func apply(_ input: Input) -> Bool {
        let before = self
        switch input {
        case .magnetometer(let present):
            magnetometerPresent = present
        case .sensorProxyCompass(let present):
            sensorProxyPresent = present
            if !present { sensorProxyHeadingDegrees = .nan }
        case .sensorProxyHeading(let degrees):
            sensorProxyHeadingDegrees = degrees.flatMap { $0.isFinite ? Angle.normalized360($0) : nil } ?? .nan
        case .stopped:
            magnetometerPresent = nil
            sensorProxyPresent = false
            sensorProxyHeadingDegrees = .nan
        }
        if !runsSensorProxy {
            sensorProxyPresent = false
            sensorProxyHeadingDegrees = .nan
        }
        return self != before
    }

    /// A new `heading-source`; what runs follows from ``runsMagnetometer`` and ``runsSensorProxy``.
    public mutating func reconfigure(_ selection: Selection) {
        guard selection != self.selection else { return }
        self.selection = selection
        if !runsMagnetometer { magnetometerPresent = nil }
        apply(.sensorProxyHeading(sensorProxyHeadingDegrees))
    }

    // MARK: What runs

    /// Whether the raw IIO sensors should run (while live sources run at all).
    public var runsMagnetometer: Bool { selection != .iioSensorProxy }

    /// Whether iio-sensor-proxy's compass should be claimed (while live sources run at all):
    /// selected, or in `auto` once the raw sensors said they cannot give a heading.
    public var runsSensorProxy: Bool {
        switch selection {
        case .iioSensorProxy: true
        case .magnetometer: false
        case .auto: magnetometerPresent == false
        }
    }

    // MARK: What serves

    /// The source whose heading is published (`HeadingSource`), `none` when neither can give one.
    public var serving: HeadingSource {
        if runsMagnetometer, magnetometerPresent == true { return .magnetometer }
        if runsSensorProxy, sensorProxyPresent { return .iioSensorProxy }
        return .none
    }

    /// The compass group as clients see it: the raw magnetometer's state while it serves (or
    /// while nothing does), else iio-sensor-proxy's heading with the stated error.
    public func published(magnetometer: CompassState) -> CompassState {
        guard serving == .iioSensorProxy else { return magnetometer }
        var c = CompassState()
        c.hasCompass = true
        c.source = .iioSensorProxy
        c.calibrationState = magnetometer.calibrationState
        c.calibrationNeeded = false
        c.calibrationHint = .none
        guard sensorProxyHeadingDegrees.isFinite else {
            c.withdrawHeading(accuracy: .unknown)
            return c
        }
        c.magneticHeadingDegrees = sensorProxyHeadingDegrees
        c.axis = .top
        c.headingErrorDegrees = Self.sensorProxyHeadingErrorDegrees
        c.accuracy = CompassAccuracy(headingErrorDegrees: Self.sensorProxyHeadingErrorDegrees)
        return c
    }
}
