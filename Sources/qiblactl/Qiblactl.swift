// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaCore
import QiblaDBus
import QiblaEventLoop
import QiblaInterface
import QiblaPlatform

@main
struct Qiblactl: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "qiblactl",
            abstract: tr("Ask qiblad for the Qibla, or compute it here."),
            discussion: paragraphs(
                tr("Coordinates are decimal degrees, north and east positive; negative values are written as they are (qiblactl qibla -33.9 18.4, or after --: qiblactl qibla -- -33.9 18.4)."),
                tr("Exit statuses (shared with qiblad and qibla-sim):") + "\n" + ExitStatus.table),
            version: qiblaVersion,
            subcommands: [QiblaCommand.self, Status.self, Monitor.self, Waybar.self, Calibrate.self, Claim.self, Sun.self, SetLocation.self, Places.self,
                          ClearLocation.self, Remind.self]) }

    /// The catalogues first (``Words``), then the command line.
    static func main() {
        Words.setUp()
        main(nil)
    }
}

/// A message on stderr and the exit status that goes with it (`ExitStatus`, shared by the three executables).
func fail(_ message: String, status: ExitStatus = .invalidValue) -> ExitCode {
    printError("qiblactl: \(message)")
    return ExitCode(status.rawValue)
}

func printError(_ message: String) {
    Console.printError(message)
}

/// Prints a line to stdout at once (no stdio buffering, so `monitor` output reaches a pipe live).
func printLine(_ message: String) {
    Console.printLine(message)
}

// MARK: qibla (no daemon needed)

struct QiblaCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "qibla",
            abstract: tr("Compute the Qibla for a place (no daemon needed)."),
            discussion: tr("Prints the great-circle bearing (what published tables use), the WGS84 geodesic bearing, the 16-point compass word, the distance to the Kaaba and today's magnetic declination (WMM2025). --json prints one object with the keys: latitude, longitude, great_circle_bearing_deg, geodesic_bearing_deg, compass_point, distance_m, distance_km, distance_mi, declination_deg, declination_decimal_year, magnetic_zone, undefined_reason (null, \"at-kaaba\" or \"antipodal\"). Undefined values are null.")) }

    @Flag(name: .long, help: ArgumentHelp(tr("Print one JSON object."))) var json = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(tr("LATITUDE LONGITUDE in degrees (north, east; negative numbers as they are, also after --).")))
    var coordinates: [String] = []

    func run() throws {
        let position = try parsePosition(coordinates)
        let solution = Qibla().solve(from: position)
        let year = DecimalYear.from(unixSeconds: WallClock.nowUnixSeconds())
        let field = MagneticModel.wmm2025.field(at: position, decimalYear: year)
        let greatCircle = solution.greatCircleBearing.value
        let geodesic = solution.geodesicBearing.value
        var reason: String?
        if case .undefined(let r) = solution.greatCircleBearing { reason = r == .atKaaba ? "at-kaaba" : "antipodal" }

        if json {
            var o = JSONObject()
            o.set("latitude", position.latitudeDegrees)
            o.set("longitude", position.longitudeDegrees)
            o.set("great_circle_bearing_deg", greatCircle)
            o.set("geodesic_bearing_deg", geodesic)
            o.set("compass_point", greatCircle.map { CompassPoint.name(forBearing: $0) })
            o.set("distance_m", solution.distanceMetres)
            o.set("distance_km", solution.distanceMetres / 1000)
            o.set("distance_mi", solution.distanceMetres / 1609.344)
            o.set("declination_deg", field.declinationDegrees)
            o.set("declination_decimal_year", year)
            o.set("magnetic_zone", field.zone.rawValue)
            o.set("undefined_reason", reason)
            print(o.text)
            return
        }
        let place = ["latitude": fixed(position.latitudeDegrees, 4), "longitude": fixed(position.longitudeDegrees, 4)]
        if let greatCircle, let geodesic {
            print(fill(tr("Qibla from {latitude}, {longitude}:"), place))
            print(fill(tr("  bearing      {bearing}° {point} from true north (great circle)"),
                       ["bearing": fixedBearing(greatCircle, 2), "point": pointName(forBearing: greatCircle)]))
            print(fill(tr("  geodesic     {bearing}° (WGS84 geodesic)"), ["bearing": fixedBearing(geodesic, 2)]))
        } else {
            print(fill(reason == "at-kaaba" ? tr("Qibla from {latitude}, {longitude}: undefined (you are at the Kaaba)")
                                            : tr("Qibla from {latitude}, {longitude}: undefined (antipodal point: every direction leads there)"), place))
        }
        print(fill(tr("  distance     {kilometres} ({miles})"),
                   ["kilometres": DistanceFormat.kilometres(solution.distanceMetres), "miles": DistanceFormat.miles(solution.distanceMetres)]))
        let declination = ["degrees": fixed(abs(field.declinationDegrees), 2), "year": fixed(year, 2)]
        var line = fill(field.declinationDegrees >= 0 ? tr("  declination  {degrees}° east (WMM2025, {year})")
                                                      : tr("  declination  {degrees}° west (WMM2025, {year})"), declination)
        switch field.zone {
        case .normal: break
        case .caution: line += tr(" — magnetic caution zone: a compass is unreliable here")
        case .blackout: line += tr(" — magnetic blackout zone: a compass is unreliable here")
        }
        print(line)
    }
}

// MARK: Talking to the daemon

struct BusOptions: ParsableArguments {
    @Flag(name: .long, help: ArgumentHelp(tr("Talk to qiblad on the system bus instead of the session bus."))) var system = false

    var name: String { system ? "system" : "session" }
    var startHint: String { system ? "systemctl start qiblad" : "systemctl --user start qiblad, or qibla-sim demo" }

    func connect() throws -> DBusConnection {
        do {
            return try DBusConnection(system ? .system : .session)
        } catch {
            throw fail("cannot connect to the \(name) bus: \(error.message)", status: .failure)
        }
    }
}

enum QibladClient {
    static let name = QiblaBus.name
    static let path = QiblaBus.objectPath
    static let interface = QiblaBus.interface

    static func call(_ connection: DBusConnection, _ member: String, _ arguments: [DBusValue] = [],
                     interface: String = QibladClient.interface) throws -> [DBusValue] {
        let message = DBusMessage.methodCall(destination: name, path: path, interface: interface, member: member)
        do {
            try message.append(contentsOf: arguments)
            return try connection.call(message, timeoutMilliseconds: 5000).arguments()
        } catch {
            if isAbsence(error) {
                throw fail(notRunning, status: .failure)
            }
            if error.name.hasSuffix(".InvalidArgument") || error.name.hasSuffix(".InvalidArgs") {
                throw fail(error.message, status: .invalidValue)
            }
            throw fail("\(member) failed: \(error.name): \(error.message)", status: .failure)
        }
    }

    static let notRunning = """
        qiblad is not running on this bus. Start it with:
          systemctl --user start qiblad     (installed service)
          qibla-sim demo                    (try it without sensors or GPS)
        """

    /// Whether `error` says no qiblad owns the name (and none could be activated).
    static func isAbsence(_ error: DBusError) -> Bool {
        error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    /// qiblad's position (Latitude, Longitude) when it knows one.
    static func lastPosition(_ properties: [String: DBusValue]) -> GeodeticPosition? {
        guard let latitude = properties["Latitude"]?.double, let longitude = properties["Longitude"]?.double else { return nil }
        return try? GeodeticPosition(latitudeDegrees: latitude, longitudeDegrees: longitude)
    }

    static func properties(_ connection: DBusConnection) throws -> [String: DBusValue] {
        properties(fromGetAll: try call(connection, "GetAll", [.string(interface)], interface: "org.freedesktop.DBus.Properties"))
    }

    /// The `a{sv}` of a GetAll reply as a dictionary by property name.
    static func properties(fromGetAll reply: [DBusValue]) -> [String: DBusValue] {
        guard case .dictionary(_, _, let entries)? = reply.first else { return [:] }
        var result: [String: DBusValue] = [:]
        for (key, value) in entries {
            if case .string(let k) = key, case .variant(let v) = value { result[k] = v }
        }
        return result
    }
}

// MARK: status

struct Status: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("Print every property of the running qiblad."),
            discussion: paragraphs(
                tr("Heading, MagneticHeading, QiblaRelativeBearing and HeadingError are known only while a client holds a compass claim. --claim holds one for a moment: it claims the compass, waits until a heading is known (or --timeout passes, or Ctrl-C; the heading then stays unknown), prints and releases it, so that a panel module polling this command can show a heading."),
                tr("--json prints one object with every property of the interface, keyed by its D-Bus name: numbers as numbers, unknown values (NaN, a timestamp of 0, a property not sent) as null."))) }
    @OptionGroup var bus: BusOptions
    @Flag(name: .long, help: ArgumentHelp(tr("Print one JSON object with the D-Bus property names as keys."))) var json = false
    @Flag(name: .long, help: ArgumentHelp(tr("Claim the compass until a heading is known (or --timeout), print, then release it."))) var claim = false
    @Option(name: .long, help: ArgumentHelp(tr("With --claim: seconds to wait for a heading (0.1–60)."))) var timeout: Double = 5

    func validate() throws {
        guard timeout.isFinite, (0.1...60).contains(timeout) else { throw ValidationError("--timeout takes seconds from 0.1 to 60") }
    }

    func run() throws {
        let properties = claim ? try claimedProperties() : try QibladClient.properties(try bus.connect())
        printLine(json ? DaemonState(properties).json.text : StatusLine(properties).text)
    }

    /// The properties once a heading is known, or when --timeout passes, under a claim of our own.
    func claimedProperties() throws -> [String: DBusValue] {
        let signals = try SignalWatcher([.interrupt, .terminate])
        let loop = try EventLoop()
        let watch = QibladWatch(connection: try bus.connect(), claim: true)
        var failure: String?
        watch.onFailure = { message in
            failure = message
            loop.stop()
        }
        watch.onEvent = { event in
            switch event {
            case .waiting:
                failure = QibladClient.notRunning
                loop.stop()
            case .appeared, .changed:
                if DaemonState(watch.properties).double(.heading) != nil { loop.stop() }
            }
        }
        signals.attach(to: loop) { _ in loop.stop() }
        _ = loop.schedule(after: .milliseconds(Int64(timeout * 1000))) { loop.stop() }
        try watch.start(on: loop)
        try loop.run()
        watch.release()
        if let failure { throw fail(failure, status: .failure) }
        if DaemonState(watch.properties).double(.heading) == nil {
            printError("qiblactl: no heading within \(fixed(timeout, 1)) s (\(DaemonState(watch.properties).bool(.hasCompass) ? "the compass is still starting" : "no compass"))")
        }
        return watch.properties
    }
}

/// "Qibla 118.99° ESE · 4,795 km · source gpsd ±5 m (3 s ago) · heading 95.2° true, accuracy high · turn right 23.8°"
struct StatusLine {
    let p: [String: DBusValue]
    init(_ properties: [String: DBusValue]) { p = properties }

    func d(_ name: String) -> Double { p[name]?.double ?? .nan }
    func s(_ name: String) -> String { p[name]?.string ?? "" }

    var text: String {
        var parts: [String] = []
        let bearing = d("QiblaBearing")
        if bearing.isFinite {
            parts.append(fill(tr("Qibla {bearing}° {point}"), ["bearing": fixedBearing(bearing, 2), "point": pointName(forBearing: bearing)]))
        } else {
            parts.append(s("LocationSource") == "none" ? tr("Qibla unknown (no location: qiblactl set-location LAT LON)") : tr("Qibla undefined here"))
        }
        let distance = d("KaabaDistance")
        if distance.isFinite { parts.append(DistanceFormat.kilometres(distance)) }
        var source = fill(tr("source {source}"), ["source": s("LocationSource")])
        let accuracy = d("LocationAccuracy")
        if accuracy.isFinite { source += " ±\(Int(accuracy.rounded())) m" }
        if case .uint64(let t)? = p["LocationTimestamp"], t > 0 {
            let age = max(0, WallClock.nowUnixSeconds() - Double(t) / 1e6)
            source += fill(tr(" ({age} ago)"), ["age": Self.ageText(age)])
        }
        // What each live source is doing, while some run (e.g. "geoclue=waiting gpsd=live").
        if !s("LocationSources").isEmpty { source += " [\(s("LocationSources"))]" }
        parts.append(source)
        let heading = d("Heading"), magnetic = d("MagneticHeading")
        // The heading's source is named when it is not qiblad's own magnetometer.
        let from = s("HeadingSource") == "iio-sensor-proxy" ? tr(" from iio-sensor-proxy") : ""
        let compassAccuracy = s("CompassAccuracy")
        if heading.isFinite {
            parts.append(fill(tr("heading {heading}° true{from}, accuracy {accuracy}"),
                              ["heading": fixedBearing(heading, 1), "from": from, "accuracy": compassAccuracy]))
        } else if magnetic.isFinite {
            parts.append(fill(tr("heading {heading}° magnetic{from} (no location for true north), accuracy {accuracy}"),
                              ["heading": fixedBearing(magnetic, 1), "from": from, "accuracy": compassAccuracy]))
        } else {
            parts.append(p["HasCompass"]?.bool == true ? tr("heading unknown") : tr("no compass (or not claimed)"))
        }
        let turn = d("QiblaRelativeBearing")
        if turn.isFinite {
            let degrees = ["degrees": fixed(abs(turn), 1)]
            parts.append(abs(turn) < 0.05 ? tr("facing the Qibla")
                         : fill(turn > 0 ? tr("turn right {degrees}°") : tr("turn left {degrees}°"), degrees))
        }
        if p["MagneticInterference"]?.bool == true { parts.append(tr("magnetic interference")) }
        if p["CalibrationNeeded"]?.bool == true { parts.append(tr("calibration needed")) }
        return parts.joined(separator: " · ")
    }

    static func ageText(_ seconds: Double) -> String {
        if seconds < 120 { return "\(Int(seconds)) s" }
        if seconds < 7200 { return "\(Int(seconds / 60)) min" }
        if seconds < 172_800 { return "\(Int(seconds / 3600)) h" }
        return "\(Int(seconds / 86_400)) d"
    }
}

// MARK: set-location / clear-location

struct SetLocation: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "set-location", abstract: tr("Pin a manual location (used when there is no live fix)."),
            discussion: tr("LATITUDE LONGITUDE, or the NAME of a town: the first of `qiblactl places NAME` (towns near qiblad's last known position first), named on stderr with its region and country so a wrong one shows. Prints the status afterwards; --json as status --json prints it.")) }
    @OptionGroup var bus: BusOptions
    @Flag(name: .long, help: ArgumentHelp(tr("Print the status afterwards as one JSON object (as status --json)."))) var json = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(tr("LATITUDE LONGITUDE in degrees (north, east; negative numbers as they are, also after --), or a town's NAME.")))
    var coordinates: [String] = []

    func run() throws {
        let connection: DBusConnection
        let position: GeodeticPosition
        if let name = Self.townName(coordinates) {
            connection = try bus.connect()
            let here = QibladClient.lastPosition(try QibladClient.properties(connection))
            guard let town = try TownSearch.matches(name, limit: 1, near: here).first?.place else {
                throw fail(TownSearch.noMatch(name), status: .invalidValue)
            }
            printError("qiblactl: \(town.title) (\(fixed(town.latitudeDegrees, 4)), \(fixed(town.longitudeDegrees, 4)))")
            guard let town = try? GeodeticPosition(latitudeDegrees: town.latitudeDegrees, longitudeDegrees: town.longitudeDegrees) else {
                throw fail("the offline list places \(town.title) out of range", status: .failure)
            }
            position = town
        } else {
            position = try parsePosition(coordinates)
            connection = try bus.connect()
        }
        _ = try QibladClient.call(connection, "SetManualLocation",
                                  [.double(position.latitudeDegrees), .double(position.longitudeDegrees)])
        let properties = try QibladClient.properties(connection)
        printLine(json ? DaemonState(properties).json.text : StatusLine(properties).text)
    }

    /// The words as a town's name: none is an option or `--`, and one has a letter (so "1 2",
    /// "-- -33 18" and "--sytem 1 2" stay coordinates and their errors).
    static func townName(_ words: [String]) -> String? {
        guard !words.isEmpty, !words.contains(where: { $0 == "--" || CoordinateWords.isOption($0) }),
              words.contains(where: { !CoordinateWords.isNumber($0) && $0.contains(where: \.isLetter) }) else { return nil }
        return words.joined(separator: " ")
    }
}

struct ClearLocation: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "clear-location", abstract: tr("Forget the manual location."),
            discussion: tr("Prints the status afterwards; --json as status --json prints it.")) }
    @OptionGroup var bus: BusOptions
    @Flag(name: .long, help: ArgumentHelp(tr("Print the status afterwards as one JSON object (as status --json)."))) var json = false

    func run() throws {
        let connection = try bus.connect()
        _ = try QibladClient.call(connection, "ClearManualLocation")
        let properties = try QibladClient.properties(connection)
        printLine(json ? DaemonState(properties).json.text : StatusLine(properties).text)
    }
}

// MARK: Helpers

/// LATITUDE LONGITUDE from the words after a subcommand (`CoordinateWords`): an unknown option or
/// a wrong count exits with the usage status, a value that is not a number or out of range with
/// the invalid-value status.
func parsePosition(_ words: [String]) throws -> GeodeticPosition {
    switch CoordinateWords.position(words) {
    case .success(let position): return position
    case .failure(let problem): throw fail(problem.message, status: problem.isUsage ? .usage : .invalidValue)
    }
}

/// A bearing as fixed-point text: 359.97 with one decimal is "0.0", not "360.0".
func fixedBearing(_ degrees: Double, _ decimals: Int) -> String {
    let text = fixed(degrees, decimals)
    return text.hasPrefix("360") ? fixed(0, decimals) : text
}

/// Fixed-point text with `decimals` digits, without the C locale (so never a comma).
func fixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "unknown" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let integer = Int(scaled / scale)
    var fraction = String(Int(scaled - Double(integer) * scale))
    while fraction.count < decimals { fraction = "0" + fraction }
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return decimals == 0 ? "\(sign)\(integer)" : "\(sign)\(integer).\(fraction)"
}

extension DBusValue {
    var displayText: String {
        switch self {
        case .double(let d): d.isFinite ? fixed(d, 2) : "unknown"
        case .string(let s): s
        case .bool(let b): b ? "true" : "false"
        case .uint64(let t): "\(t)"
        default: "\(self)"
        }
    }
}
