// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaDBus
import QiblaInterface
import QiblaPlatform

/// qiblad's properties as qiblactl shows them: one JSON object with every property of the
/// interface, the compact block `monitor` redraws on a terminal, and the turn hint of the panel.
struct DaemonState {
    let p: [String: DBusValue]
    init(_ properties: [String: DBusValue]) { p = properties }

    func double(_ property: QiblaProperty) -> Double? {
        guard let d = p[property.rawValue]?.double, d.isFinite else { return nil }
        return d
    }
    func string(_ property: QiblaProperty) -> String? { p[property.rawValue]?.string }
    func bool(_ property: QiblaProperty) -> Bool { p[property.rawValue]?.bool ?? false }

    // MARK: JSON

    /// Every property of the interface, in the XML's order, keyed by its D-Bus name: doubles as
    /// numbers (NaN as null), strings, booleans, timestamps as integer microseconds (0, "none", as
    /// null); a property qiblad did not send is null. The same keys for `status`, `monitor`,
    /// `set-location` and `clear-location`.
    var json: JSONObject {
        var o = JSONObject()
        for property in QiblaProperty.allCases {
            let name = property.rawValue
            switch p[name] {
            case .double(let d)?: o.set(name, d)
            case .string(let s)?: o.set(name, s)
            case .bool(let b)?: o.set(name, b)
            case .uint64(let t)? where t > 0: o.set(name, t)
            default: o.set(name, nil as String?)
            }
        }
        return o
    }

    // MARK: The turn

    /// The turn still needed to face the Qibla, (−180, 180], positive = turn right.
    var turn: Double? { double(.qiblaRelativeBearing) }

    /// The compass class for a panel: `no-compass`, or the accuracy (`unknown`, `unreliable`,
    /// `low`, `medium`, `high`).
    var compassClass: String {
        bool(.hasCompass) ? (string(.compassAccuracy) ?? "unknown") : "no-compass"
    }

    // MARK: The block `monitor` redraws on a terminal

    /// Four lines: the Qibla and the position, the heading and its accuracy, a needle towards the
    /// Qibla with the turn, and what needs attention (each under 80 columns, for a terminal).
    var block: [String] {
        var lines: [String] = []
        let source = string(.locationSource) ?? "none"
        if let bearing = double(.qiblaBearing) {
            var line = "Qibla \(fixedBearing(bearing, 2))° \(CompassPoint.name(forBearing: bearing))"
            if let distance = double(.kaabaDistance) { line += " · \(DistanceFormat.kilometres(distance))" }
            line += " · \(source)"
            if let accuracy = double(.locationAccuracy) { line += " ±\(Int(accuracy.rounded())) m" }
            if case .uint64(let t)? = p[QiblaProperty.locationTimestamp.rawValue], t > 0 {
                line += " (\(StatusLine.ageText(max(0, WallClock.nowUnixSeconds() - Double(t) / 1e6))) ago)"
            }
            lines.append(line)
        } else {
            lines.append(source == "none" ? "Qibla unknown: no location (qiblactl set-location LAT LON)" : "Qibla undefined here")
        }
        let accuracy = string(.compassAccuracy) ?? "unknown"
        let error = double(.headingError).map { " ±\(fixed($0, 1))°" } ?? ""
        if let heading = double(.heading) {
            lines.append("Heading \(fixedBearing(heading, 1))° true · accuracy \(accuracy)\(error) · axis \(string(.headingAxis) ?? "none")"
                         + (fromSensorProxy ? " · iio-sensor-proxy" : ""))
        } else if let magnetic = double(.magneticHeading) {
            lines.append("Heading \(fixedBearing(magnetic, 1))° magnetic (no location) · accuracy \(accuracy)\(error)"
                         + (fromSensorProxy ? " · iio-sensor-proxy" : ""))
        } else {
            lines.append(bool(.hasCompass) ? "Heading unknown yet" : "No compass (or not claimed yet)")
        }
        if let turn {
            let hint = TurnHint(turn)
            lines.append("   \(hint.needle)   " + (hint.isFacing ? "facing the Qibla" : "turn \(turn > 0 ? "right" : "left") \(fixed(abs(turn), 1))°"))
        } else {
            lines.append("")
        }
        var notes: [String] = []
        if bool(.magneticInterference) { notes.append("magnetic interference: move away from metal") }
        if bool(.calibrationNeeded) { notes.append("calibration needed: qiblactl calibrate") }
        if notes.isEmpty, fromSensorProxy {
            notes.append("heading from iio-sensor-proxy: calibrated by the sensor hub, not qiblad")
        } else if notes.isEmpty, bool(.hasCompass), let state = string(.calibrationState) {
            let progress = double(.calibrationProgress).map { " \(Int(($0 * 100).rounded())) %" } ?? ""
            notes.append("calibration \(state)\(state == "collecting" ? progress : "")")
        }
        lines.append(notes.joined(separator: " · "))
        return lines
    }

    /// `HeadingSource` is iio-sensor-proxy (the raw magnetometer, qiblad's own, is not named).
    var fromSensorProxy: Bool { string(.headingSource) == "iio-sensor-proxy" }

    /// The block while qiblad is away.
    static func waitingBlock(bus: String) -> [String] {
        ["Waiting for qiblad to appear on the \(bus) bus…", "", "", ""]
    }
}

/// How to show a turn: a needle pointing towards the Qibla from the device's top edge, and a
/// rotation sign (clockwise = turn right).
struct TurnHint {
    let turn: Double
    init(_ turn: Double) { self.turn = turn }

    static let needles = ["↑", "↗", "→", "↘", "↓", "↙", "←", "↖"]
    static let asciiNeedles = ["^", "^>", ">", "v>", "v", "<v", "<", "<^"]

    /// The turn in whole degrees, without its sign.
    var wholeDegrees: Int { Int(abs(turn).rounded()) }
    /// Within half a degree: no turn worth showing.
    var isFacing: Bool { wholeDegrees == 0 }

    private var sector: Int {
        let clockwise = (turn.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360)
        return Int((clockwise + 22.5) / 45) % 8
    }

    var needle: String { Self.needles[sector] }
    var asciiNeedle: String { Self.asciiNeedles[sector] }
    /// ↻ turn right, ↺ turn left, • facing it.
    var rotation: String { isFacing ? "•" : turn > 0 ? "↻" : "↺" }
    /// > turn right, < turn left, = facing it.
    var asciiRotation: String { isFacing ? "=" : turn > 0 ? ">" : "<" }
}
