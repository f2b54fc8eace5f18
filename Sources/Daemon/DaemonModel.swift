// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// The daemon's whole model: claims, location and compass, and the place-dependent values derived
/// from them. One-way data flow: the executable feeds inputs (a claim, a fix, a sample, a
/// configuration) into it and reads ``properties`` out; the model never calls back.
///
/// Pure: no I/O, no clock (the wall-clock time comes in with the inputs that need it).
public struct DaemonModel: Sendable {
    /// The model's part of the configuration file.
    public struct Configuration: Sendable, Equatable {
        public var qibla = QiblaSettings()
        public var compass = CompassModel.Configuration()
        /// `always-on`, `idle-exit`.
        public var run = RunPolicy()
        /// `heading-source`.
        public var headingSource = HeadingSourceModel.Selection.auto
        public init() {}
    }

    /// What follows from the current location: the Qibla, the field and the day it was computed for.
    public struct Place: Sendable, Equatable {
        public var location: Location
        public var source: LocationSource
        public var answer: QiblaAnswer
        /// Whole days since the Unix epoch (UTC) of the magnetic model's date.
        public var dayNumber: Int
    }

    public private(set) var configuration: Configuration
    public private(set) var claims = ClaimModel()
    public private(set) var location = LocationModel()
    public private(set) var compass: CompassModel
    /// Which device the heading comes from (the raw magnetometer or iio-sensor-proxy's compass).
    public private(set) var headingSource: HeadingSourceModel
    /// nil while no location is known.
    public private(set) var place: Place?
    /// The sun: the next Qibla-sun instant here, the sun check.
    public private(set) var sun = SunModel()

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        compass = CompassModel(configuration: configuration.compass)
        headingSource = HeadingSourceModel(selection: configuration.headingSource)
    }

    // MARK: Inputs

    /// A client claims the compass; `.firstClaim` says to start the live sources.
    public mutating func claim(by client: String) -> ClaimModel.Transition {
        claims.claim(by: client)
    }

    /// A client releases its claim or left the bus; `.lastRelease` says to stop the live sources
    /// (and then feed ``CompassModel/Input/stopped`` and ``LocationModel/Input/liveFixLost``).
    public mutating func release(by client: String) -> ClaimModel.Transition {
        claims.release(by: client)
    }

    /// Whether the live sources (sensors, position source) should run: a claim is held, or `always-on`.
    public var liveSourcesRun: Bool { configuration.run.liveSourcesRun(claimed: claims.isClaimed) }

    /// Applies a location input at wall-clock time `nowUnixSeconds` (seconds since the epoch).
    public mutating func apply(_ input: LocationModel.Input, nowUnixSeconds: Double) {
        if location.apply(input) { refreshPlace(nowUnixSeconds: nowUnixSeconds) }
    }

    /// Applies a compass input; recomputes the declination first when the UTC day changed.
    public mutating func apply(_ input: CompassModel.Input, nowUnixSeconds: Double) {
        if let place, Self.dayNumber(nowUnixSeconds) != place.dayNumber { refreshPlace(nowUnixSeconds: nowUnixSeconds) }
        compass.apply(input, expectedField: place?.answer.field)
        switch input {
        case .sensorsAvailable(let hasAccelerometer, _, _): headingSource.apply(.magnetometer(present: hasAccelerometer))
        case .sensorsUnavailable: headingSource.apply(.magnetometer(present: false))
        case .stopped: headingSource.apply(.stopped)
        default: break
        }
    }

    /// Applies a heading-source input (iio-sensor-proxy's compass and heading); returns true when
    /// what is published may have changed.
    @discardableResult
    public mutating func apply(_ input: HeadingSourceModel.Input) -> Bool {
        headingSource.apply(input)
    }

    /// New settings (a reload); the place is recomputed (the Kaaba or the bearing model may have changed).
    public mutating func reconfigure(_ configuration: Configuration, nowUnixSeconds: Double) {
        self.configuration = configuration
        compass.reconfigure(configuration.compass)
        headingSource.reconfigure(configuration.headingSource)
        refreshPlace(nowUnixSeconds: nowUnixSeconds)
    }

    private mutating func refreshPlace(nowUnixSeconds: Double) {
        guard let (location, source) = location.current else {
            place = nil
            updateSun(nowUnixSeconds: nowUnixSeconds)
            return
        }
        let answer = configuration.qibla.answer(for: location.position,
                                                decimalYear: DecimalYear.from(unixSeconds: nowUnixSeconds))
        place = Place(location: location, source: source, answer: answer, dayNumber: Self.dayNumber(nowUnixSeconds))
        updateSun(nowUnixSeconds: nowUnixSeconds)
    }

    // MARK: The sun

    /// Looks for the next Qibla-sun instant again if the place changed or ``SunModel/wakeUpUnixSeconds``
    /// has come (the wiring's one sun timer calls this).
    public mutating func updateSun(nowUnixSeconds: Double) {
        sun.update(position: place?.location.position, qiblaBearingDegrees: place?.answer.bearingDegrees ?? .nan,
                   nowUnixSeconds: nowUnixSeconds)
    }

    /// `CheckHeadingWithSun`: the compass error (published true heading − the sun's azimuth, or its
    /// opposite), degrees in (−180, 180], or why it cannot be measured now. To store it, the wiring
    /// persists ``headingCorrection(afterStoring:)`` and then applies it as
    /// ``CompassModel/Input/headingCorrection(_:)``.
    public func checkHeadingWithSun(alignment: SunModel.Alignment, nowUnixSeconds: Double) -> Result<Double, SunModel.CheckRefusal> {
        guard headingSource.serving != .iioSensorProxy else { return .failure(.notOwnCompass) }
        return sun.check(alignment: alignment, claimed: liveSourcesRun, position: place?.location.position,
                         measuredTrueHeadingDegrees: properties.heading, spreadDegrees: compass.state.headingSpreadDegrees,
                         nowUnixSeconds: nowUnixSeconds)
    }

    /// The correction that makes the heading agree with a check that found `error`: the error is
    /// measured on the corrected heading, so it adds to the correction in force.
    public func headingCorrection(afterStoring error: Double) -> Double {
        Angle.normalized180(compass.state.headingCorrectionDegrees + error)
    }

    static func dayNumber(_ unixSeconds: Double) -> Int {
        let days = (unixSeconds / 86_400).rounded(.down)
        return days.isFinite && abs(days) < 1e15 ? Int(days) : 0
    }

    /// Seconds → whole microseconds for `LocationTimestamp`; 0 (none) for anything that does not
    /// fit (negative, non-finite, past the year 584,000).
    static func microseconds(_ seconds: Double) -> UInt64 {
        let micro = (seconds * 1e6).rounded(.down)
        guard micro.isFinite, micro >= 0, micro < 1.8e19 else { return 0 }
        return UInt64(micro)
    }

    // MARK: Output

    /// Every property, derived from the models: the true heading is the magnetic heading plus the
    /// declination here, and the turn is the Qibla minus the true heading, in (−180, 180].
    public var properties: PublishedProperties {
        var p = PublishedProperties()
        if let place {
            let position = place.location.position
            p.latitude = position.latitudeDegrees
            p.longitude = position.longitudeDegrees
            p.altitude = place.source == .manual ? .nan : position.heightMetres
            p.locationAccuracy = place.location.horizontalAccuracyMetres ?? .nan
            p.locationTimestampMicroseconds = Self.microseconds(place.location.timestampUnixSeconds)
            p.locationSource = place.source
            p.qiblaBearing = place.answer.bearingDegrees
            p.qiblaBearingGeodesic = place.answer.geodesicBearingDegrees
            p.kaabaDistance = place.answer.distanceMetres
            p.declination = place.answer.declinationDegrees
        }
        p.locationSources = location.sourcesSummary
        let c = headingSource.published(magnetometer: compass.state)
        p.hasCompass = c.hasCompass
        p.magneticHeading = c.magneticHeadingDegrees
        p.headingAxis = c.axis
        p.headingSource = c.magneticHeadingDegrees.isFinite ? c.source : .none
        p.headingFused = c.magneticHeadingDegrees.isFinite && c.fused
        p.headingError = c.headingErrorDegrees
        p.compassAccuracy = c.accuracy
        p.magneticInterference = c.magneticInterference
        p.calibrationNeeded = c.calibrationNeeded
        p.calibrationProgress = c.calibrationProgress
        p.calibrationState = c.calibrationState
        p.calibrationHint = c.hasCompass ? c.calibrationHint : .none
        p.calibrationResidual = c.calibrationResidualMicrotesla
        p.hardIronOffsetMagnitude = c.hardIronOffsetMagnitudeMicrotesla
        p.heading = trueHeading(magnetic: c.magneticHeadingDegrees, declination: p.declination) ?? .nan
        p.qiblaRelativeBearing = relativeBearing(qibla: p.qiblaBearing, heading: p.heading) ?? .nan
        p.nextQiblaSunTimeMicroseconds = sun.nextTimeMicroseconds
        p.nextQiblaSunKind = sun.nextKind
        return p
    }
}
