// SPDX-License-Identifier: Apache-2.0
// Public vocabulary of the IIO sensor layer: what the daemon configures and what it receives.
import QiblaCore

/// Which physical quantity an IIO device measures.
public enum SensorKind: String, Sendable, CaseIterable {
    /// Magnetic flux density; IIO channel type `magn` (kernel unit gauss, published in microtesla).
    case magnetometer
    /// Proper acceleration; IIO channel type `accel` (m/s²).
    case accelerometer
    /// Angular velocity; IIO channel type `anglvel` (rad/s, right-handed about each device axis).
    case gyroscope

    /// The IIO channel type prefix in attribute names (`in_<prefix>_x_raw`).
    public var channelPrefix: String {
        switch self {
        case .magnetometer: "magn"
        case .accelerometer: "accel"
        case .gyroscope: "anglvel"
        }
    }

    /// Factor from the kernel's unit to the published unit: gauss → microtesla (1 G = 100 µT) for the
    /// magnetometer, 1 for the accelerometer and the gyroscope (kernel ABI
    /// `Documentation/ABI/testing/sysfs-bus-iio`: `in_magn_*` in gauss, `in_accel_*` in m/s²,
    /// `in_anglvel_*` in rad/s).
    public var kernelUnitToPublishedUnit: Double {
        switch self {
        case .magnetometer: 100
        case .accelerometer, .gyroscope: 1
        }
    }
}

/// One calibrated reading of a three-axis sensor.
public struct SensorSample: Sendable, Hashable {
    public var kind: SensorKind
    /// Microtesla for the magnetometer, m/s² for the accelerometer, rad/s for the gyroscope (device
    /// frame, counter-clockwise positive about each axis seen from its tip); `(raw + offset) × scale` per axis,
    /// then the mount matrix applied (v' = M·v).
    public var vector: Vector3
    /// `CLOCK_MONOTONIC` nanoseconds when read by polling, or the scan's `in_timestamp` channel in
    /// buffered mode (the layer selects `monotonic` in `current_timestamp_clock` when it can).
    public var timestampNanoseconds: Int64
    /// How many readings a magnetometer's or an accelerometer's sample ``vector`` is the mean of:
    /// 1 for a reading, more for what a resting period hands over in its place (``resting(_:)``;
    /// the heading's window then holds that field alone, and a heading is published from the
    /// two means). 1 for the gyroscope.
    public var meanOfSamples: Int = 1

    public init(kind: SensorKind, vector: Vector3, timestampNanoseconds: Int64) {
        self.kind = kind; self.vector = vector; self.timestampNanoseconds = timestampNanoseconds
    }

    /// This sample at rest: its vector replaced by the rest detector's reference for its kind
    /// (``QiblaCore/RestDetector/restingAcceleration``, ``QiblaCore/RestDetector/restingField``),
    /// the mean of the still stretch, when there is one.
    public func resting(_ detector: RestDetector) -> SensorSample {
        var sample = self
        switch kind {
        case .accelerometer:
            if let reference = detector.restingAcceleration {
                (sample.vector, sample.meanOfSamples) = (reference, max(1, detector.restingAccelerationSampleCount))
            }
        case .magnetometer:
            if let reference = detector.restingField { (sample.vector, sample.meanOfSamples) = (reference, max(1, detector.restingFieldSampleCount)) }
        case .gyroscope: break
        }
        return sample
    }
}

/// How samples are taken from the kernel.
public enum SensorReadingMode: String, Sendable {
    /// Re-read `in_*_{x,y,z}_raw` sysfs attributes on a dedicated thread (default; works everywhere).
    case polling
    /// Enable the IIO buffer and read scans from `/dev/iio:deviceN` (opt-in; falls back to polling
    /// when no data arrives within one second).
    case buffered
}

/// Configuration of a ``SensorHub``.
public struct SensorConfiguration: Sendable {
    /// Root of the sysfs tree (`/sys`); tests point it at a fixture tree.
    public var sysfsRoot: String
    /// Where the IIO character devices live (`/dev`).
    public var devRoot: String
    /// udev's device database (`/run/udev/data`), for the accelerometer's hwdb `ACCEL_MOUNT_MATRIX`.
    public var udevDataDirectory: String = UdevDatabase.defaultDirectory
    public var mode: SensorReadingMode
    /// Requested sample rate in hertz (clamped to 0.1…1000).
    public var sampleRateHertz: Double
    /// The rate while the phone rests (``QiblaCore/RestDetector``; polling: the sampling thread's
    /// period; buffered: the nearest available `sampling_frequency` at or above it, and a
    /// `buffer/watermark` of one rest period's scans), hertz, or nil to read at
    /// `sampleRateHertz` always (`rest-sample-rate`, default 2: a turn after a rest is seen within
    /// 500 ms, and a phone lying on a table costs a tenth of the reads; BENCHMARKS.md, "The phone
    /// lying still": at 2 Hz a claimed, still qiblad spends about what iio-sensor-proxy does).
    public var restSampleRateHertz: Double? = 2
    /// When the phone counts as resting.
    public var rest = RestDetector.Configuration()
    /// The `name` attribute of the magnetometer to prefer when several exist.
    public var preferredMagnetometerName: String?
    /// The `name` attribute of the accelerometer to prefer when several exist.
    public var preferredAccelerometerName: String?
    /// A mount matrix that wins over anything udev or sysfs says (v' = M·v).
    public var magnetometerMountMatrixOverride: Matrix3?
    public var accelerometerMountMatrixOverride: Matrix3?
    /// Whether a gyroscope is read (`gyroscope = auto`, the default) or not (`gyroscope = off`).
    /// It is read only while the phone moves: at a rest its reads stop (polling) or its scan
    /// elements are disabled (buffered), and the first motion brings it back.
    public var gyroscopeEnabled = true
    /// The `name` attribute of the gyroscope to prefer when several exist (`gyroscope = NAME`);
    /// without one, the accelerometer's own device when it carries `in_anglvel_*` (one chip, one
    /// clock, one scan), else the lowest device number.
    public var preferredGyroscopeName: String?
    /// The gyroscope's mount matrix override (`gyroscope-mount-matrix`; v' = M·v). Without one, a
    /// gyroscope on the accelerometer's device takes udev's `ACCEL_MOUNT_MATRIX` like the
    /// accelerometer (same chip, same axes), then `in_anglvel_mount_matrix`, `in_mount_matrix`,
    /// `mount_matrix`.
    public var gyroscopeMountMatrixOverride: Matrix3?

    /// With a gyroscope (issue 30): the sample rate while the phone moves, hertz; nil for
    /// ``sampleRateHertz``. The daemon asks for 50 (`DaemonConfiguration`; `sample-rate` sets
    /// both): the fused heading needs it, since at 20 Hz a reading is up to 50 ms old in a turn of
    /// 150°/s (BENCHMARKS.md, "The fused needle through the daemon").
    public var gyroscopeSampleRateHertz: Double?
    /// With a gyroscope: the hand-off interval (`max-signal-rate` while the heading is fused); nil
    /// for ``handOffInterval``.
    public var gyroscopeHandOffInterval: Duration?

    /// These settings as the hub runs them when it reads a gyroscope: its sample rate and hand-off.
    var withGyroscopeRates: SensorConfiguration {
        var c = self
        c.sampleRateHertz = gyroscopeSampleRateHertz ?? sampleRateHertz
        c.handOffInterval = gyroscopeHandOffInterval ?? handOffInterval
        return c
    }

    /// Polling mode: how often the sampling thread hands its samples to the event loop (earlier
    /// when its batch is full). One hand-off wakes the loop once; match it to `max-signal-rate`
    /// (10 Hz by default), since the heading is signalled no more often than that anyway.
    public var handOffInterval: Duration = .milliseconds(100)

    /// Test hook: called on the sensor thread before every attribute read in polling mode, with the
    /// file path. Lets tests simulate a slow device (LIS3MDL reads can take 2 s).
    var beforeAttributeRead: (@Sendable (String) -> Void)?
    /// Test hook: first delay before rediscovery after the sensors vanish (doubles up to 4 s).
    var initialRetryDelay: Duration = .milliseconds(250)
    /// How long buffered mode waits for the first scan before falling back to polling.
    var bufferWatchdog: Duration = .seconds(1)

    public init(sysfsRoot: String = "/sys", devRoot: String = "/dev", mode: SensorReadingMode = .polling,
                sampleRateHertz: Double = 20,
                preferredMagnetometerName: String? = nil, preferredAccelerometerName: String? = nil,
                magnetometerMountMatrixOverride: Matrix3? = nil, accelerometerMountMatrixOverride: Matrix3? = nil) {
        self.sysfsRoot = sysfsRoot
        self.devRoot = devRoot
        self.mode = mode
        self.sampleRateHertz = sampleRateHertz
        self.preferredMagnetometerName = preferredMagnetometerName
        self.preferredAccelerometerName = preferredAccelerometerName
        self.magnetometerMountMatrixOverride = magnetometerMountMatrixOverride
        self.accelerometerMountMatrixOverride = accelerometerMountMatrixOverride
    }

    /// The requested rate, made finite and clamped to 0.1…1000 Hz.
    var effectiveSampleRateHertz: Double {
        guard sampleRateHertz.isFinite else { return 20 }
        return min(1000, max(0.1, sampleRateHertz))
    }

    func mountMatrixOverride(for kind: SensorKind) -> Matrix3? {
        switch kind {
        case .magnetometer: magnetometerMountMatrixOverride
        case .accelerometer: accelerometerMountMatrixOverride
        case .gyroscope: gyroscopeMountMatrixOverride
        }
    }

    func preferredName(for kind: SensorKind) -> String? {
        switch kind {
        case .magnetometer: preferredMagnetometerName
        case .accelerometer: preferredAccelerometerName
        case .gyroscope: preferredGyroscopeName
        }
    }
}

/// What a ``SensorHub`` reports, always on the event loop's thread.
public enum SensorEvent: Sendable {
    /// Calibrated samples, in the order read (a batch may mix kinds; inline storage, no heap).
    case samples(SensorSampleBatch)
    /// Sensors were found and opened; the `name` attributes of the chosen devices (the gyroscope:
    /// nil when there is none, it is switched off, or it failed; its samples come only while the
    /// phone moves).
    case available(magnetometer: String, accelerometer: String?, gyroscope: String?)
    /// No usable magnetometer (not present, vanished, or failing); discovery is retried while running.
    case unavailable(reason: String)
    /// Attribute values that could not be parsed and were dropped; `count` is the total since `start()`.
    case droppedValue(count: Int)
    /// The phone began (true) or ended (false) a rest (``QiblaCore/RestDetector``): the sensors are
    /// read at ``SensorConfiguration/restSampleRateHertz`` meanwhile, and only samples that drifted
    /// are handed over, so the code of the heading's path is not needed until the rest ends.
    case resting(Bool)
}
