// STUB — replaced by the geodesy work (issue 2). Signatures are the contract the daemon codes against.

/// The Qibla from a position: bearings to the Kaaba and the distance.
public struct Qibla: Sendable {
    /// Default Kaaba position, WGS84 (the value used by the Adhan libraries): 21.4225241 N, 39.8261818 E.
    public static let defaultKaaba = GeodeticPosition(uncheckedLatitude: 21.4225241, longitude: 39.8261818)
    public var kaaba: GeodeticPosition
    public init(kaaba: GeodeticPosition = Qibla.defaultKaaba) { self.kaaba = kaaba }

    public func solve(from position: GeodeticPosition) -> QiblaSolution {
        fatalError("unimplemented")
    }
}

/// A bearing that may be undefined (at the Kaaba, in the antipodal band).
public enum QiblaBearing: Sendable, Equatable {
    /// Degrees clockwise from true north in [0, 360).
    case degrees(Double)
    case undefined(QiblaUndefinedReason)
    public var value: Double? { if case .degrees(let d) = self { d } else { nil } }
}

public enum QiblaUndefinedReason: Sendable, Equatable {
    case atKaaba
    case antipodal
}

public struct QiblaSolution: Sendable, Equatable {
    public var greatCircleBearing: QiblaBearing
    public var geodesicBearing: QiblaBearing
    /// WGS84 geodesic distance to the Kaaba, metres.
    public var distanceMetres: Double
}
