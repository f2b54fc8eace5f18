// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaCore
import QiblaDBus
import QiblaEventLoop
import QiblaInterface
import QiblaPlatform

/// `qiblactl calibrate`: claims the compass, tells the user what to do, shows the progress from
/// `CalibrationProgress` and ends with the result of the fit qiblad accepted.
struct Calibrate: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("Calibrate the magnetometer: move the phone in a slow figure eight until qiblad accepts a fit."),
            discussion: paragraphs(
                // xgettext:no-c-format
                tr("qiblad calibrates itself in the background whenever the compass is used; this command guides the moves and waits for the result. Move the phone slowly in a figure eight, tilting it forward, back and to the sides as you go (there is no need to turn it over), away from metal, magnets and electronics. On a terminal a progress bar follows CalibrationProgress with CalibrationHint, the motion still missing, under it; otherwise a line is printed at every 10 % and whenever the hint changes."),
                tr("Exit status: 0 calibrated (the result is printed); 1 no daemon or no compass; 3 not enough motion within --timeout; 4 magnetic interference at the end of --timeout; 130 interrupted. With --json, one object: result (calibrated, no-compass, timeout, interference, interrupted), residual_ut, hard_iron_offset_ut, compass_accuracy, heading_error_deg, progress, hint, seconds, reason."))) }

    @OptionGroup var bus: BusOptions
    @Option(name: .long, help: ArgumentHelp(tr("Give up after this many seconds (1–3600)."))) var timeout: Double = 120
    @Flag(name: .long, help: ArgumentHelp(tr("Forget the current calibration first and learn it again."))) var reset = false
    @Flag(name: .long, help: ArgumentHelp(tr("Print one JSON object with the result."))) var json = false

    func validate() throws {
        guard timeout.isFinite, (1...3600).contains(timeout) else {
            throw ValidationError("--timeout takes seconds from 1 to 3600")
        }
    }

    enum Outcome: String {
        case calibrated, noCompass = "no-compass", timeout, interference, interrupted
        var exitStatus: ExitStatus {
            switch self {
            case .calibrated: .success
            case .noCompass: .failure
            case .timeout: .notCalibrated
            case .interference: .interference
            case .interrupted: .interrupted
            }
        }
    }

    func run() throws {
        let signals = try SignalWatcher([.interrupt, .terminate])
        let loop = try EventLoop()
        let connection = try bus.connect()
        try connection.addMatch("type='signal',sender='\(QiblaBus.name)',path='\(QiblaBus.objectPath)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
        if reset { _ = try QibladClient.call(connection, QiblaMethod.resetCalibration.rawValue) }
        _ = try QibladClient.call(connection, QiblaMethod.claimCompass.rawValue)
        var current = try QibladClient.properties(connection)
        let started = ContinuousClock.now
        let progress = ProgressDisplay(isTerminal: Console.isTerminal(.standardOutput), quiet: json)
        if !json {
            printLine(tr("Move the phone slowly in a figure eight, tilting it forward, back and to the sides as you go, away from metal, magnets and electronics."))
        }

        var outcome: Outcome?
        var reason = ""
        func finish(_ result: Outcome, _ why: String = "") {
            guard outcome == nil else { return }
            outcome = result
            reason = why
            loop.stop()
        }
        func check() {
            let state = current[QiblaProperty.calibrationState.rawValue]?.string
            let hint = current[QiblaProperty.calibrationHint.rawValue]?.string.flatMap(CalibrationHint.init(rawValue:)) ?? .none
            progress.show(current[QiblaProperty.calibrationProgress.rawValue]?.double ?? 0,
                          hint: state == MagnetometerCalibrator.State.calibrated.rawValue ? .none : hint)
            if state == MagnetometerCalibrator.State.calibrated.rawValue {
                // Let one more sample through so the accuracy reflects the new fit.
                _ = loop.schedule(after: .milliseconds(600)) { finish(.calibrated) }
            }
        }

        connection.attach(to: loop)
        connection.onSignal { message in
            guard message.member == "PropertiesChanged", let args = try? message.arguments(), args.count >= 2,
                  case .dictionary(_, _, let entries) = args[1] else { return }
            for (key, value) in entries {
                if case .string(let k) = key, case .variant(let v) = value { current[k] = v }
            }
            check()
        }
        connection.onDisconnected = { finish(.noCompass, "the bus went away") }
        signals.attach(to: loop) { _ in finish(.interrupted, "interrupted") }
        // The sensors start with the claim: give them a few seconds to appear.
        _ = loop.schedule(after: .seconds(5)) {
            if current[QiblaProperty.hasCompass.rawValue]?.bool != true {
                finish(.noCompass, "qiblad found no usable magnetometer and accelerometer (see its log: journalctl --user -u qiblad)")
            }
        }
        _ = loop.schedule(after: .seconds(timeout)) {
            if current[QiblaProperty.magneticInterference.rawValue]?.bool == true {
                finish(.interference, "the field does not match the Earth's field here: move away from metal, magnets and electronics and try again")
            } else {
                let done = Int(((current[QiblaProperty.calibrationProgress.rawValue]?.double ?? 0) * 100).rounded())
                let hint = current[QiblaProperty.calibrationHint.rawValue]?.string.flatMap(CalibrationHint.init(rawValue:)) ?? .move
                finish(.timeout, "not determined well enough within \(Int(timeout)) s (\(done) %): \(hint == .none ? CalibrationHint.move.instruction : hint.instruction)")
            }
        }
        check()
        try loop.run()
        progress.end()

        current = (try? QibladClient.properties(connection)) ?? current
        _ = try? QibladClient.call(connection, QiblaMethod.releaseCompass.rawValue)
        let result = outcome ?? .interrupted
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let residual = current[QiblaProperty.calibrationResidual.rawValue]?.double ?? .nan
        let offset = current[QiblaProperty.hardIronOffsetMagnitude.rawValue]?.double ?? .nan
        let accuracy = current[QiblaProperty.compassAccuracy.rawValue]?.string ?? "unknown"
        let headingError = current[QiblaProperty.headingError.rawValue]?.double ?? .nan
        if json {
            var o = JSONObject()
            o.set("result", result.rawValue)
            o.set("residual_ut", residual)
            o.set("hard_iron_offset_ut", offset)
            o.set("compass_accuracy", accuracy)
            o.set("heading_error_deg", headingError)
            o.set("progress", current[QiblaProperty.calibrationProgress.rawValue]?.double)
            o.set("hint", current[QiblaProperty.calibrationHint.rawValue]?.string)
            o.set("seconds", seconds)
            o.set("reason", reason.isEmpty ? nil : reason)
            printLine(o.text)
        } else if result == .calibrated {
            printLine(fill(tr("Calibrated in {seconds} s: residual {residual} µT, hard-iron offset {offset} µT, compass accuracy {accuracy} (±{error}°)."),
                            ["seconds": "\(Int(seconds.rounded()))", "residual": fixed(residual, 2), "offset": fixed(offset, 1),
                             "accuracy": accuracy, "error": fixed(headingError, 1)]))
        } else {
            printError("qiblactl: calibration failed: \(reason)")
        }
        if result != .calibrated { throw ExitCode(result.exitStatus.rawValue) }
    }
}

/// A progress bar redrawn in place on a terminal, or a line per 10 % elsewhere.
final class ProgressDisplay {
    private let isTerminal: Bool
    private let quiet: Bool
    private var lastDecile = -1
    private var lastHint = CalibrationHint.none
    private var drawn = false

    init(isTerminal: Bool, quiet: Bool) {
        self.isTerminal = isTerminal
        self.quiet = quiet
    }

    /// Shows the progress and, under it, the hint's instruction.
    func show(_ fraction: Double, hint: CalibrationHint = .none) {
        guard !quiet else { return }
        let f = fraction.isFinite ? min(1, max(0, fraction)) : 0
        let percent = Int((f * 100).rounded(.down))
        if isTerminal {
            let width = 30
            let filled = Int((f * Double(width)).rounded(.down))
            // The bar, then the hint on the line below (erased first), then back up to the bar.
            Console.write("\r\u{1B}[2K[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                          + "] \(percent) %\n\u{1B}[2K" + Self.instruction(hint) + "\u{1B}[1A\r", to: .standardOutput)
            drawn = true
        } else {
            let decile = percent / 10
            guard decile > lastDecile || hint != lastHint else { return }
            lastDecile = max(lastDecile, decile)
            lastHint = hint
            let percent = ["percent": "\(decile * 10)", "hint": Self.instruction(hint)]
            printLine(fill(hint == .none ? tr("calibration {percent} %") : tr("calibration {percent} %: {hint}"), percent))
        }
    }

    func end() {
        if drawn { Console.write("\n\u{1B}[2K", to: .standardOutput) }
    }

    /// QiblaCore's hint (`CalibrationHint.instruction`, English) in the user's language.
    static func instruction(_ hint: CalibrationHint) -> String {
        switch hint {
        case .none: ""
        case .move: tr("keep moving the phone slowly through different orientations")
        case .tiltForwardBack: tr("tilt the top edge down and up as you move")
        case .tiltLeftRight: tr("roll the phone to the left and right as you move")
        case .turnAround: tr("turn round slowly, all the way, with the phone")
        case .awayFromMetal: tr("move away from metal, magnets and electronics")
        }
    }
}
