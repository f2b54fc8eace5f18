// SPDX-License-Identifier: Apache-2.0
import QiblaCore

/// Which Qibla model feeds the `QiblaBearing` property.
public enum BearingModel: String, Sendable, CaseIterable {
    /// Initial great-circle bearing on a sphere (what published tables, apps and mosque surveys use).
    case greatCircle = "great-circle"
    /// Initial azimuth of the WGS84 geodesic (Karney 2013).
    case geodesic
}

/// The Qibla section of the configuration: what the bearing is computed to, and with which model.
public struct QiblaSettings: Sendable, Equatable {
    /// `bearing-model`: which model `QiblaBearing` publishes.
    public var bearingModel: BearingModel = .greatCircle
    /// `kaaba`: the target, degrees (default 21.4225241, 39.8261818).
    public var kaaba: GeodeticPosition = Qibla.defaultKaaba

    public init() {}

    /// The `QiblaFor` answer for any position at a moment (no state involved).
    /// - Parameters:
    ///   - position: where, degrees (WGS84).
    ///   - decimalYear: when, for the magnetic model (`DecimalYear.from(unixSeconds:)`).
    public func answer(for position: GeodeticPosition, decimalYear: Double) -> QiblaAnswer {
        let solution = Qibla(kaaba: kaaba).solve(from: position)
        let field = MagneticModel.wmm2025.field(at: position, decimalYear: decimalYear)
        let greatCircle = solution.greatCircleBearing.value ?? .nan
        let geodesic = solution.geodesicBearing.value ?? .nan
        return QiblaAnswer(
            bearingDegrees: bearingModel == .geodesic ? geodesic : greatCircle,
            geodesicBearingDegrees: geodesic,
            distanceMetres: solution.distanceMetres.isFinite ? solution.distanceMetres : .nan,
            field: field)
    }
}

/// The Qibla and the Earth's field at one place and time. Undefined values are NaN.
public struct QiblaAnswer: Sendable, Equatable {
    /// `QiblaBearing`: the configured model's bearing, degrees clockwise from true north.
    public var bearingDegrees: Double
    /// `QiblaBearingGeodesic`, degrees clockwise from true north.
    public var geodesicBearingDegrees: Double
    /// `KaabaDistance`: WGS84 geodesic distance, metres.
    public var distanceMetres: Double
    /// WMM2025 at the place and time.
    public var field: MagneticField

    /// Magnetic declination, degrees east positive; NaN when the model gives none.
    public var declinationDegrees: Double {
        field.declinationDegrees.isFinite ? field.declinationDegrees : .nan
    }
}
