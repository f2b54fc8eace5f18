// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaCore
import QiblaDBus
import QiblaInterface
import QiblaPlatform

/// `qiblactl waybar`: a panel module that keeps running — waybar's custom-module JSON, or plain
/// text lines for i3blocks (`interval=persist`) and yambar — claiming the compass while it runs.
struct Waybar: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("A panel module: one JSON line per change for waybar (or text for i3blocks), claiming the compass."),
            discussion: paragraphs(
                tr("Prints waybar's custom-module protocol (return-type json): one object per line with text, alt, tooltip, class and percentage, printed again only when it changes. class is no-qiblad (qiblad is away; the module waits for it), no-compass, or the compass accuracy: unknown, unreliable, low, medium, high. percentage is how well the device faces the Qibla: 100 facing it, 0 facing away or unknown. alt is the same as class."),
                tr("--format sets the text while a heading is known, --format-no-heading while it is not. Placeholders: {icon} (🕋, or Q with --ascii), {needle} (an arrow towards the Qibla from the device's top edge: ↑ ↗ → ↘ ↓ ↙ ← ↖), {rotate} (↻ turn right, ↺ turn left, • facing it; with --ascii > < =), {turn} (whole degrees to turn, no sign), {turn_signed} (positive = right), {deg} (°, nothing with --ascii), {qibla} (the Qibla bearing, whole degrees), {point} (its 16-point compass word), {heading}, {accuracy}, {error} (one-sigma degrees), {distance_km}, {source}. An unknown value prints as ?."),
                tr("--plain prints only the text, one line per change, for i3blocks (interval=persist) or any script reading lines. Examples: examples/waybar-config.jsonc, examples/i3blocks.conf."))) }

    @OptionGroup var bus: BusOptions
    @Option(name: .long, help: ArgumentHelp(tr("The text while a heading is known."))) var format = "{icon} {rotate} {turn}{deg}"
    @Option(name: .long, help: ArgumentHelp(tr("The text while no heading is known."))) var formatNoHeading = "{icon} {qibla}{deg} {point}"
    @Flag(name: .long, help: ArgumentHelp(tr("ASCII only: Q for the Kaaba, > < = for the turn, no degree sign."))) var ascii = false
    @Flag(name: .long, help: ArgumentHelp(tr("Print only the text, one line per change (i3blocks, yambar, scripts)."))) var plain = false

    func run() throws {
        var last = ""
        try QibladWatch.run(bus: bus, claim: true) { watch, _, _ in
            let module = PanelModule(state: watch.owner == nil ? nil : DaemonState(watch.properties), ascii: ascii,
                                     format: format, formatNoHeading: formatNoHeading)
            let line = plain ? module.text : module.json.text
            guard line != last else { return }
            last = line
            printLine(line)
        }
    }
}

/// What a panel shows for one state of qiblad (nil: qiblad is away).
struct PanelModule {
    let state: DaemonState?
    let ascii: Bool
    let format: String
    let formatNoHeading: String

    var icon: String { ascii ? "Q" : "🕋" }

    var `class`: String { state?.compassClass ?? "no-qiblad" }

    var text: String {
        guard let state else { return icon + (ascii ? " -" : " –") }
        guard state.double(.qiblaBearing) != nil else { return icon + " ?" }
        return fill(state.turn == nil ? formatNoHeading : format, state)
    }

    var percentage: Int {
        guard let turn = state?.turn else { return 0 }
        return Int((100 - Double(TurnHint(turn).wholeDegrees) / 180 * 100).rounded())
    }

    var tooltip: String {
        guard let state else { return "Waiting for qiblad on the bus" }
        var lines: [String] = []
        if let bearing = state.double(.qiblaBearing) {
            var line = "Qibla \(fixedBearing(bearing, 1))° \(CompassPoint.name(forBearing: bearing))"
            if let distance = state.double(.kaabaDistance) { line += ", \(DistanceFormat.kilometres(distance))" }
            lines.append(line)
        } else {
            lines.append(state.string(.locationSource) == "none" ? "No location: qiblactl set-location LAT LON" : "Qibla undefined here")
        }
        // Whole degrees, so that the line (printed again only when it changes) follows the text.
        if let heading = state.double(.heading) {
            let error = state.double(.headingError).map { ", ±\(fixed($0, 0))°" } ?? ""
            lines.append("Heading \(fixedBearing(heading, 0))° true (accuracy \(state.string(.compassAccuracy) ?? "unknown")\(error))")
        } else {
            lines.append(state.bool(.hasCompass) ? "Heading unknown yet" : "No compass")
        }
        if let turn = state.turn {
            let hint = TurnHint(turn)
            lines.append(hint.isFacing ? "Facing the Qibla" : "Turn \(turn > 0 ? "right" : "left") \(hint.wholeDegrees)°")
        }
        var source = "Position: \(state.string(.locationSource) ?? "none")"
        if let accuracy = state.double(.locationAccuracy) { source += " ±\(Int(accuracy.rounded())) m" }
        lines.append(source)
        if state.bool(.magneticInterference) { lines.append("Magnetic interference: move away from metal") }
        if state.bool(.calibrationNeeded) { lines.append("Calibration needed: qiblactl calibrate") }
        return lines.joined(separator: "\n")
    }

    var json: JSONObject {
        var o = JSONObject()
        o.set("text", text)
        o.set("alt", `class`)
        o.set("tooltip", tooltip)
        o.set("class", `class`)
        o.set("percentage", percentage)
        return o
    }

    /// The format with its placeholders replaced.
    func fill(_ format: String, _ state: DaemonState) -> String {
        let hint = state.turn.map(TurnHint.init)
        func whole(_ value: Double?) -> String { value.map { "\(Int($0.rounded()) % 360)" } ?? "?" }
        let values: [String: String] = [
            "icon": icon,
            "needle": hint.map { ascii ? $0.asciiNeedle : $0.needle } ?? "?",
            "rotate": hint.map { ascii ? $0.asciiRotation : $0.rotation } ?? "?",
            "turn": hint.map { "\($0.wholeDegrees)" } ?? "?",
            "turn_signed": state.turn.map { "\(Int($0.rounded()))" } ?? "?",
            "deg": ascii ? "" : "°",
            "qibla": whole(state.double(.qiblaBearing)),
            "point": state.double(.qiblaBearing).map { CompassPoint.name(forBearing: $0) } ?? "?",
            "heading": whole(state.double(.heading)),
            "accuracy": state.string(.compassAccuracy) ?? "?",
            "error": state.double(.headingError).map { fixed($0, 1) } ?? "?",
            "distance_km": state.double(.kaabaDistance).map { "\(Int(($0 / 1000).rounded()))" } ?? "?",
            "source": state.string(.locationSource) ?? "?",
        ]
        var out = ""
        var rest = Substring(format)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}"), let value = values[String(rest[rest.index(after: open)..<close])] else {
                out += "{"
                rest = rest[rest.index(after: open)...]
                continue
            }
            out += value
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}
