// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// How the sun's calculators on the bus are answered (`SunPosition`, `QiblaSunTimes`,
/// `KaabaSunPassages`): which model answers, with which settings, and what is refused. The wiring
/// only encodes the answer or the refusal for D-Bus.
///
/// Pure: the wall-clock time comes in with the request.
extension DaemonModel {
    /// Why a sun calculation cannot be answered; the description is a sentence for the D-Bus
    /// error (`InvalidArgument`).
    public enum SunRequestRefusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The time is outside the solar model's range (NREL SPA with the ΔT table: 1900 to 2149).
        case timeOutOfRange
        /// The search window leaves the solar model's range.
        case windowOutOfRange

        public var description: String {
            switch self {
            case .timeOutOfRange: "the time is outside the solar model's range"
            case .windowOutOfRange: "the 24 hours from start leave the solar model's range (1900 to 2149)"
            }
        }
    }

    /// `SunPosition`: the sun's topocentric azimuth and apparent elevation (degrees) at `position`
    /// and `unixSeconds`, from NREL's SPA (Reda & Andreas 2004).
    public func sunPosition(at position: GeodeticPosition, unixSeconds: Double) -> Result<SolarPosition, SunRequestRefusal> {
        guard let sun = SolarPositionAlgorithm.position(at: unixSeconds, for: position) else { return .failure(.timeOutOfRange) }
        return .success(sun)
    }

    /// `QiblaSunTimes`: the instants in the 24 hours from `startUnixSeconds` when the sun (or a
    /// vertical shadow) points to the Qibla at `position`, with the sun at least the sun model's
    /// minimum elevation high; none where the Qibla is undefined (at the Kaaba or its antipode).
    /// The Qibla is this configuration's (Kaaba, bearing model) at `nowUnixSeconds`' magnetic year.
    public func qiblaSunTimes(at position: GeodeticPosition, from startUnixSeconds: Double,
                              nowUnixSeconds: Double) -> Result<[QiblaSunEvent], SunRequestRefusal> {
        let bearing = configuration.qibla.answer(for: position, decimalYear: DecimalYear.from(unixSeconds: nowUnixSeconds)).bearingDegrees
        guard bearing.isFinite else { return .success([]) }
        guard let times = QiblaSunSearch(minimumElevationDegrees: sun.configuration.minimumElevationDegrees)
            .times(at: position, qiblaBearingDegrees: bearing, from: startUnixSeconds) else {
            return .failure(.windowOutOfRange)
        }
        return .success(times.events)
    }

    /// `KaabaSunPassages`: the year's two days the sun passes over this configuration's Kaaba
    /// (none outside the solar model's years; the bus layer refuses those before asking).
    public func kaabaSunPassages(year: Int) -> [KaabaSunPassage] {
        KaabaSunPassages.passages(year: year, kaaba: configuration.qibla.kaaba) ?? []
    }
}
