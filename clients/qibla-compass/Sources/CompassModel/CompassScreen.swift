// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// Which designed state the window shows.
public enum CompassPage: String, Sendable, Equatable {
    /// qiblad is not on the bus: how to start it.
    case noDaemon = "no-daemon"
    /// qiblad is on the bus; its properties have not arrived yet.
    case connecting
    /// No position at all: manual entry (`SetManualLocation`).
    case noPosition = "no-position"
    /// The dial, the needle and the turn.
    case compass
    /// A position but no compass (`HasCompass` false): the bearing as a number and the sun as the compass.
    case noCompass = "no-compass"
}

/// Everything the window shows, computed from qiblad's properties alone (one-way: properties in,
/// screen out). The GTK side draws this and nothing else, so what a user sees is tested here.
///
/// Angles on screen are degrees clockwise from the top edge of the phone (the direction the
/// phone's `HeadingAxis` points): the dial's north is drawn at −`Heading`, the needle at
/// `QiblaBearing` − `Heading`, which is `QiblaRelativeBearing`.
public struct CompassScreen: Sendable, Equatable {
    public var page: CompassPage

    // MARK: The dial
    /// Where the dial's north is drawn, degrees clockwise from the top of the screen (−Heading); nil without a heading.
    public var dialNorthScreenDegrees: Double?
    /// The Qibla bearing on the dial, degrees clockwise from true north; nil when unknown or undefined.
    public var qiblaBearingDegrees: Double?
    /// Half the width of the uncertainty wedge around the needle, degrees (`HeadingError`, capped at 90); nil when unknown.
    public var wedgeHalfWidthDegrees: Double?
    /// The turn still needed, degrees in (−180, 180], positive = turn right (`QiblaRelativeBearing`).
    public var turnDegrees: Double?
    /// Within the error of facing the Qibla (see ``facingTolerance(headingError:)``).
    public var isFacing: Bool

    // MARK: Words
    /// "Turn left 24°", "Facing the Qibla", or what is missing.
    public var instruction: String
    /// For screen readers: the needle in words ("Qibla 24° to your left").
    public var accessibleDescription: String
    /// "Heading 32° NNE" or empty.
    public var headingText: String
    /// "119° ESE" (from true north).
    public var bearingText: String
    /// "7,621 km" or "—".
    public var distanceText: String
    /// "33.90° S, 18.40° E" or empty.
    public var placeText: String
    /// "GPS (gpsd) · ±5 m · 12 s ago".
    public var sourceText: String
    /// "High · ±1.2°", with the class for styling.
    public var accuracyText: String
    public var accuracyClass: String
    /// Where the heading comes from (`HeadingSource`, `HeadingFused`): "Compass: this phone's
    /// magnetometer, gyroscope-aided"; empty without a heading source.
    public var headingSourceText: String

    // MARK: Guidance
    /// Shown while qiblad's magnetometer serves the heading and is learning its calibration (or
    /// qiblad says one is needed).
    public var calibration: Calibration?
    /// A warning while `MagneticInterference` is true.
    public var interferenceWarning: String?

    /// The calibration bar and its hint.
    public struct Calibration: Sendable, Equatable {
        /// 0…1 (`CalibrationProgress`).
        public var progress: Double
        public var title: String
        /// What motion is still missing (`CalibrationHint` in words).
        public var hint: String
    }

    /// - Parameters:
    ///   - properties: qiblad's properties (empty before GetAll answered).
    ///   - daemonPresent: qiblad owns its name on the bus.
    ///   - compassStarting: the claim was made less than a moment ago, so `HasCompass` false may
    ///     only mean "not started yet" (the compass page is kept instead of the no-compass one).
    ///   - nowUnixSeconds: for the age of the position.
    public init(properties p: DaemonProperties, daemonPresent: Bool, compassStarting: Bool = false,
                nowUnixSeconds: Double) {
        let bearing = p.double(.qiblaBearing)
        let heading = p.double(.heading)
        let source = p.string(.locationSource).flatMap(LocationSource.init(rawValue:)) ?? .none
        let hasCompass = p.bool(.hasCompass)

        if !daemonPresent { page = .noDaemon }
        else if p.isEmpty { page = .connecting }
        else if source == .none { page = .noPosition }
        else if !hasCompass && !compassStarting { page = .noCompass }
        else { page = .compass }

        qiblaBearingDegrees = bearing
        dialNorthScreenDegrees = heading.map { Angle.normalized360(-$0) }
        let error = p.double(.headingError)
        wedgeHalfWidthDegrees = error.map { min(max($0, 0), 90) }
        let turn = heading == nil ? nil : p.double(.qiblaRelativeBearing)
        turnDegrees = turn
        isFacing = turn.map { abs($0) <= Self.facingTolerance(headingError: error) } ?? false

        // Words about the needle.
        if let turn, let bearing {
            let degrees = Int(abs(turn).rounded())
            if isFacing {
                instruction = tr("Facing the Qibla")
                accessibleDescription = fill(tr("Facing the Qibla, {bearing}° from true north"),
                                             ["bearing": "\(Int(Angle.normalized360(bearing).rounded()) % 360)"])
            } else if turn > 0 {
                instruction = fill(tr("Turn right {degrees}°"), ["degrees": "\(degrees)"])
                accessibleDescription = fill(tr("Qibla {degrees}° to your right"), ["degrees": "\(degrees)"])
            } else {
                instruction = fill(tr("Turn left {degrees}°"), ["degrees": "\(degrees)"])
                accessibleDescription = fill(tr("Qibla {degrees}° to your left"), ["degrees": "\(degrees)"])
            }
        } else if let bearing {
            let text = Self.bearingWords(bearing)
            instruction = hasCompass ? tr("Waiting for the compass…") : tr("No compass on this device")
            accessibleDescription = fill(tr("Qibla {bearing} from true north; no heading"), ["bearing": text])
        } else if source != .none {
            instruction = tr("The Qibla is undefined here")
            accessibleDescription = instruction
        } else {
            instruction = tr("No position")
            accessibleDescription = tr("Qibla unknown: no position")
        }

        headingText = heading.map { fill(tr("Heading {heading}"), ["heading": Self.bearingWords($0)]) } ?? ""
        bearingText = bearing.map(Self.bearingWords) ?? DistanceFormat.unknown
        distanceText = p.double(.kaabaDistance).map(DistanceFormat.kilometres) ?? DistanceFormat.unknown
        if let latitude = p.double(.latitude), let longitude = p.double(.longitude) {
            placeText = Self.coordinates(latitude: latitude, longitude: longitude)
        } else {
            placeText = ""
        }
        var sourceParts = [Self.sourceName(source)]
        if let accuracy = p.double(.locationAccuracy) { sourceParts.append("±\(Self.metres(accuracy))") }
        if let stamp = p.uint64(.locationTimestamp) {
            let age = max(0, nowUnixSeconds - Double(stamp) / 1e6)
            // TRANSLATORS: how old the position is; {age} is "12 s", "5 min", "3 h" or "2 d".
            sourceParts.append(fill(tr("{age} ago"), ["age": Self.ageText(age)]))
        }
        sourceText = sourceParts.joined(separator: " · ")

        let accuracy = hasCompass ? (p.string(.compassAccuracy) ?? "unknown") : "no-compass"
        accuracyClass = accuracy
        let accuracyWord: String = switch accuracy {
        case "high": tr("High")
        case "medium": tr("Medium")
        case "low": tr("Low")
        case "unreliable": tr("Unreliable")
        case "no-compass": tr("No compass")
        default: tr("Unknown")
        }
        accuracyText = error.map { "\(accuracyWord) · ±\(Self.oneDecimal($0))°" } ?? accuracyWord
        headingSourceText = Self.headingSourceWords(p.string(.headingSource), fused: p.bool(.headingFused))

        // CalibrationState is qiblad's raw magnetometer's: while another source serves the heading
        // (iio-sensor-proxy: its calibration is not qiblad's, README "Heading sources") it says
        // nothing about the heading shown. A qiblad without HeadingSource has only the magnetometer.
        let magnetometerServes = p.string(.headingSource).map { $0 == "magnetometer" } ?? true
        if hasCompass, (magnetometerServes && p.string(.calibrationState) == "collecting") || p.bool(.calibrationNeeded) {
            calibration = Calibration(progress: min(max(p.double(.calibrationProgress) ?? 0, 0), 1),
                                      title: tr("Calibrating the compass"),
                                      hint: Self.hintWords(p.string(.calibrationHint) ?? "move"))
        } else {
            calibration = nil
        }
        interferenceWarning = hasCompass && p.bool(.magneticInterference)
            ? tr("Magnetic interference: move away from metal, magnets and electronics. The needle may be wrong.")
            : nil
        // The numbers formatted above outside fill(_:_:), in the user's digits.
        let numbers = LocaleNumbers.current
        bearingText = numbers.localized(bearingText)
        distanceText = numbers.localized(distanceText)
        placeText = numbers.localized(placeText)
        sourceText = numbers.localized(sourceText)
        accuracyText = numbers.localized(accuracyText)
    }

    /// How close to the Qibla counts as facing it, degrees: the heading's own error (one sigma),
    /// at least 1° and at most 10° (beyond 10° the compass cannot tell a person they face it);
    /// 5° while the error is unknown.
    public static func facingTolerance(headingError: Double?) -> Double {
        guard let headingError else { return 5 }
        return min(max(headingError, 1), 10)
    }

    // MARK: Formatting

    /// "119° ESE" ("119° ESE" in French too, "293° ONO" for WNW).
    public static func bearingWords(_ bearing: Double) -> String {
        let whole = Int(Angle.normalized360(bearing).rounded()) % 360
        return "\(whole)° \(pointName(CompassPoint.name(forBearing: bearing)))"
    }

    /// QiblaCore's 16-point abbreviation ("WNW") in the user's language.
    public static func pointName(_ abbreviation: String) -> String {
        // TRANSLATORS: the 16 points of the compass, abbreviated (N, NNE, NE, … NNW); W is O in French.
        switch abbreviation {
        case "N": tr("N")
        case "NNE": tr("NNE")
        case "NE": tr("NE")
        case "ENE": tr("ENE")
        case "E": tr("E")
        case "ESE": tr("ESE")
        case "SE": tr("SE")
        case "SSE": tr("SSE")
        case "S": tr("S")
        case "SSW": tr("SSW")
        case "SW": tr("SW")
        case "WSW": tr("WSW")
        case "W": tr("W")
        case "WNW": tr("WNW")
        case "NW": tr("NW")
        case "NNW": tr("NNW")
        default: abbreviation
        }
    }

    /// "33.90° S, 18.40° E".
    public static func coordinates(latitude: Double, longitude: Double) -> String {
        let lon = longitude > 180 ? longitude - 360 : longitude
        // TRANSLATORS: N, S, E and W are the one-letter compass points, on the dial and after coordinates.
        return "\(twoDecimals(abs(latitude)))° \(latitude < 0 ? tr("S") : tr("N")), "
            + "\(twoDecimals(abs(lon)))° \(lon < 0 ? tr("W") : tr("E"))"
    }

    static func sourceName(_ source: LocationSource) -> String {
        switch source {
        case .geoclue: tr("Location service")
        case .gpsd: tr("GPS")
        case .manual: tr("Set by hand")
        case .lastKnown: tr("Last known position")
        case .none: tr("No position")
        }
    }

    /// The heading's source in words: qiblad's own reading of the magnetometer, or
    /// iio-sensor-proxy's compass (a heading made by a sensor hub); "gyroscope-aided" while the
    /// attitude filter runs. Empty for `none` or a source this version does not know.
    public static func headingSourceWords(_ source: String?, fused: Bool) -> String {
        let name: String
        switch source {
        case "magnetometer": name = tr("Compass: this phone's magnetometer")
        case "iio-sensor-proxy": name = tr("Compass: iio-sensor-proxy")
        default: return ""
        }
        // TRANSLATORS: after the compass's source: "Compass: this phone's magnetometer, gyroscope-aided".
        return fused ? fill(tr("{source}, gyroscope-aided"), ["source": name]) : name
    }

    static func hintWords(_ hint: String) -> String {
        switch hint {
        case "tilt-forward-back": tr("Tip the top edge of the phone up and down.")
        case "tilt-left-right": tr("Roll the phone to the left and to the right.")
        case "turn-around": tr("Turn around through every direction.")
        case "away-from-metal": tr("Move away from metal, magnets and electronics, then keep moving.")
        case "none": tr("Almost done.")
        default: tr("Move the phone slowly in a figure eight.")
        }
    }

    /// "12 s", "5 min", "3 h", "2 d" ("2 j" in French).
    static func ageText(_ seconds: Double) -> String {
        switch seconds {
        // TRANSLATORS: an age in seconds, minutes, hours and days, abbreviated as units are.
        case ..<60: fill(tr("{count} s"), ["count": "\(Int(seconds))"])
        case ..<3600: fill(tr("{count} min"), ["count": "\(Int(seconds / 60))"])
        case ..<86400: fill(tr("{count} h"), ["count": "\(Int(seconds / 3600))"])
        default: fill(tr("{count} d"), ["count": "\(Int(seconds / 86400))"])
        }
    }

    static func metres(_ metres: Double) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : "\(oneDecimal(metres / 1000)) km"
    }

    static func oneDecimal(_ x: Double) -> String { fixed(x, places: 1) }
    static func twoDecimals(_ x: Double) -> String { fixed(x, places: 2) }

    /// `x` with `places` decimals, rounded half away from zero (no Foundation formatter).
    static func fixed(_ x: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(x) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var fractionText = "\(fraction)"
        while fractionText.count < places { fractionText = "0" + fractionText }
        return (x < 0 && scaled > 0 ? "-" : "") + "\(whole)" + (places > 0 ? ".\(fractionText)" : "")
    }
}
