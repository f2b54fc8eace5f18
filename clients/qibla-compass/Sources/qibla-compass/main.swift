// SPDX-License-Identifier: Apache-2.0
// qibla-compass: the Qibla compass screen, a client of qiblad on the session bus. Wiring only:
// options, the locale and text domain, then the window.
import CIntl
import CompassModel
import QiblaGeonames
import QiblaInterface
#if canImport(Glibc)
import Glibc
#endif

func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

let usage = """
    Usage: qibla-compass [--system] [--size WIDTHxHEIGHT] [--screenshot FILE] [--search TEXT] [--verbose]

    The Qibla compass: a dial that turns with the phone and a needle to the Kaaba, from qiblad.

      --system              talk to a qiblad on the system bus (default: the session bus)
      --size WxH            the window's initial size in pixels (default 420x760)
      --screenshot FILE     render the window to FILE (PNG) once it shows a complete update,
                            print what it shows and exit (status 1 if nothing complete in 25 s)
      --search TEXT         open the location page with TEXT in its search field
      --verbose             log the claim and bus events to standard error
      --find-place QUERY    print the offline list's places matching QUERY (best first, at most
                            20: "title|latitude|longitude") with the time taken, and exit;
                            given again, each QUERY is searched in turn over one index (as
                            keystrokes are); --near LAT LON puts towns within 100 km first;
                            --typed-after MS reads the list on its own thread as the location
                            page does and types the first QUERY MS milliseconds later, timing
                            each keystroke to its answer; the index comes from the towns'
                            cache as in the app ($XDG_CACHE_HOME/qiblad) unless
                            --no-town-cache (libgeonames read and folded, each step timed)
      --version, --help
    """

var options = CompassWindow.Options()
var findPlace: [String] = []
var findNear: (latitudeDegrees: Double, longitudeDegrees: Double)?
var typedAfter: UInt32?
var useTownCache = true
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--system": options.systemBus = true
    case "--verbose": options.verbose = true
    case "--screenshot":
        guard let path = arguments.popFirst() else { printError("qibla-compass: --screenshot needs a FILE\n\n\(usage)"); exit(64) }
        options.screenshotPath = path
    case "--size":
        guard let text = arguments.popFirst() else { printError("qibla-compass: --size needs WIDTHxHEIGHT\n\n\(usage)"); exit(64) }
        let parts = text.split(separator: "x").compactMap { Int32($0) }
        guard parts.count == 2, (200...8000).contains(parts[0]), (200...8000).contains(parts[1]) else {
            printError("qibla-compass: --size takes WIDTHxHEIGHT in pixels, 200 to 8000 each (got '\(text)')"); exit(64)
        }
        options.width = parts[0]; options.height = parts[1]
    case "--search":
        guard let text = arguments.popFirst() else { printError("qibla-compass: --search needs a TEXT\n\n\(usage)"); exit(64) }
        options.searchText = text
    case "--find-place":
        guard let query = arguments.popFirst() else { printError("qibla-compass: --find-place needs a QUERY\n\n\(usage)"); exit(64) }
        findPlace.append(query)
    case "--no-town-cache": useTownCache = false
    case "--typed-after":
        guard let text = arguments.popFirst(), let ms = UInt32(text), ms <= 60_000 else {
            printError("qibla-compass: --typed-after takes MILLISECONDS, 0 to 60000"); exit(64)
        }
        typedAfter = ms
    case "--near":
        guard let lat = arguments.popFirst().flatMap(Double.init), let lon = arguments.popFirst().flatMap(Double.init) else {
            printError("qibla-compass: --near takes LATITUDE LONGITUDE in degrees (-33.9 18.4)"); exit(64)
        }
        findNear = (lat, lon)
    case "--help", "-h": print(usage); exit(0)
    case "--version": print("qibla-compass \(qiblaVersion)"); exit(0)
    default: printError("qibla-compass: unknown argument '\(argument)'\n\n\(usage)"); exit(64)
    }
}

setlocale(LC_ALL, "")
bindtextdomain(textDomain, localeDirectory())
bind_textdomain_codeset(textDomain, "UTF-8")

if !findPlace.isEmpty {
    let cache = useTownCache ? TownCache.user : nil
    if let typedAfter {
        exit(PlaceSearchReport.runAsTyped(queries: findPlace, near: findNear, typedAfterMilliseconds: typedAfter, cache: cache))
    }
    exit(PlaceSearchReport.run(queries: findPlace, near: findNear, cache: cache))
}

/// Where the catalogues are: QIBLA_COMPASS_LOCALEDIR, else PREFIX/share/locale beside the binary.
func localeDirectory() -> String {
    if let directory = getenv("QIBLA_COMPASS_LOCALEDIR") { return String(cString: directory) }
    var path = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &path, path.count - 1)
    guard n > 0 else { return "/usr/share/locale" }
    let executable = String(decoding: path[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let prefix = executable.split(separator: "/").dropLast(2).joined(separator: "/")
    return "/" + prefix + "/share/locale"
}

var window: CompassWindow?
let status = Adwaita.run(applicationID: CompassWindow.applicationID, unique: options.screenshotPath == nil) { app in
    // GTK set the direction from its own catalogue at start-up (none for Urdu); the app's decides.
    Widget.setDefaultDirection(rightToLeft: LanguageDirection.isRightToLeft)
    let w = CompassWindow(app: app, options: options)
    window = w
    w.present()
}
exit(window.map { $0.exitStatus != 0 ? $0.exitStatus : status } ?? status)
