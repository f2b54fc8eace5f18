// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// The sun as a second compass, the daemon's policy (issue 15):
/// - the next Qibla-sun instant for the current place (`NextQiblaSunTime`, `NextQiblaSunKind`),
///   and when it must be looked for again;
/// - the sun check of the needle (`CheckHeadingWithSun`): when it may be done and what error it
///   finds;
/// - the stored heading correction (per magnetometer, persisted by the wiring).
///
/// Pure: the time comes in with every input; the model never arms a timer itself. It says when it
/// wants to be asked again (``wakeUpUnixSeconds``) and the wiring arms one timer for that.
public struct SunModel: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Instants and checks need the sun at least this high (apparent elevation, degrees).
        public var minimumElevationDegrees = 5.0
        /// A check is refused while the heading's spread over the smoothing window exceeds this
        /// (degrees): the phone is moving.
        public var maximumSpreadDegrees = 2.0
        /// How far ahead an instant is looked for, seconds.
        public var searchWindowSeconds = 86_400.0
        public init() {}
    }

    /// What the next instant was computed for.
    struct SearchKey: Sendable, Equatable {
        var position: GeodeticPosition
        var qiblaBearingDegrees: Double
    }

    public let configuration: Configuration
    /// The next instant with the sun high enough, or nil when none is known.
    public private(set) var next: QiblaSunEvent?
    /// When the model wants ``update(position:qiblaBearingDegrees:nowUnixSeconds:)`` to be called
    /// again: the next instant (it has passed then), or the end of the search window when the
    /// window held none; nil while there is nothing to wait for (no location, or a Qibla that is
    /// undefined here). At most one wake-up is ever asked for.
    public private(set) var wakeUpUnixSeconds: Double?
    private var key: SearchKey?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: The next instant

    /// The place (nil: no location) and its Qibla bearing (NaN: undefined) at wall-clock time
    /// `now`. Searches again only when the place or the bearing changed, or the wake-up time has
    /// come; otherwise it is a comparison.
    public mutating func update(position: GeodeticPosition?, qiblaBearingDegrees: Double, nowUnixSeconds now: Double) {
        guard let position, qiblaBearingDegrees.isFinite, now.isFinite else {
            next = nil
            wakeUpUnixSeconds = nil
            key = nil
            return
        }
        let newKey = SearchKey(position: position, qiblaBearingDegrees: qiblaBearingDegrees)
        if newKey == key, let wake = wakeUpUnixSeconds, now < wake { return }
        key = newKey
        var search = QiblaSunSearch(minimumElevationDegrees: configuration.minimumElevationDegrees)
        search.toleranceSeconds = 0.1
        // Strictly after now: an instant that is just now has passed for whoever asks.
        let result = search.times(at: position, qiblaBearingDegrees: qiblaBearingDegrees, from: now,
                                  durationSeconds: configuration.searchWindowSeconds)
        guard let result else {
            // Outside the solar model's years: nothing to wait for.
            next = nil
            wakeUpUnixSeconds = nil
            return
        }
        next = result.events.first { $0.unixSeconds > now }
        wakeUpUnixSeconds = next.map { $0.unixSeconds + 1 } ?? now + configuration.searchWindowSeconds
    }

    /// `NextQiblaSunTime`: microseconds since the epoch, 0 when none is known.
    public var nextTimeMicroseconds: UInt64 {
        guard let next else { return 0 }
        return DaemonModel.microseconds(next.unixSeconds)
    }

    /// A time on the bus: whole microseconds since the epoch (0 for what does not fit).
    public static func busMicroseconds(_ unixSeconds: Double) -> UInt64 { DaemonModel.microseconds(unixSeconds) }

    /// `NextQiblaSunKind`: `sun`, `shadow` or `none`.
    public var nextKind: String { next?.kind.rawValue ?? "none" }

    // MARK: The sun check

    /// How the user points the heading axis.
    public enum Alignment: String, Sendable, CaseIterable {
        /// Towards the sun.
        case sun
        /// Along the shadow of a vertical object (the sun's azimuth + 180°), the phone flat.
        case shadow
    }

    /// Why a check cannot be done now. The description is a sentence for the D-Bus error.
    public enum CheckRefusal: Error, Equatable, Sendable, CustomStringConvertible {
        case notClaimed
        case noLocation
        case noHeading
        case moving(spreadDegrees: Double)
        case sunTooLow(elevationDegrees: Double)
        /// The heading comes from iio-sensor-proxy: its readings carry no spread that would tell a
        /// still phone from a moving one, and a correction is stored per raw magnetometer.
        case notOwnCompass

        public var description: String {
            switch self {
            case .notClaimed: "claim the compass first (ClaimCompass): the check needs the sensors running"
            case .noLocation: "no location is known: the sun's direction depends on where you are"
            case .noHeading: "no heading is available yet: hold the phone still with the compass claimed"
            case .moving(let spread): "the phone is moving (heading spread \(rounded(spread))°): hold it still, aligned"
            case .sunTooLow(let elevation): "the sun is too low (\(rounded(elevation))° above the horizon; at least 5° is needed)"
            case .notOwnCompass: "the heading comes from iio-sensor-proxy's compass: the sun check needs qiblad's own magnetometer"
            }
        }

        private func rounded(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }
    }

    /// The compass error found by a check: the measured true heading minus the sun's azimuth (or
    /// its opposite for a shadow), degrees in (−180, 180]. `measuredTrueHeadingDegrees` is the
    /// published `Heading` *without* any stored correction; `spreadDegrees` its spread over the
    /// smoothing window.
    public func check(alignment: Alignment, claimed: Bool, position: GeodeticPosition?,
                      measuredTrueHeadingDegrees: Double, spreadDegrees: Double,
                      nowUnixSeconds: Double) -> Result<Double, CheckRefusal> {
        guard claimed else { return .failure(.notClaimed) }
        guard let position else { return .failure(.noLocation) }
        guard measuredTrueHeadingDegrees.isFinite else { return .failure(.noHeading) }
        guard spreadDegrees.isFinite, spreadDegrees <= configuration.maximumSpreadDegrees else {
            return .failure(.moving(spreadDegrees: spreadDegrees))
        }
        guard let sun = SolarPositionAlgorithm.position(at: nowUnixSeconds, for: position) else { return .failure(.noLocation) }
        guard sun.elevationDegrees >= configuration.minimumElevationDegrees else {
            return .failure(.sunTooLow(elevationDegrees: sun.elevationDegrees))
        }
        let truth = alignment == .sun ? sun.azimuthDegrees : sun.azimuthDegrees + 180
        return .success(Angle.turn(from: truth, to: measuredTrueHeadingDegrees))
    }
}
