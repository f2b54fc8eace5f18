// qibla-bench: nanoseconds per call of the QiblaCore hot paths, as a markdown table.
//
// Method: a fixed set of deterministic points (the LCG below, shared with
// scripts/geographiclib_bench.cpp) is run through each function once per batch; the time of a
// batch divided by the number of points is one sample. After warm-up batches, the median and the
// 90th percentile of the samples are reported. Results feed a sink that is printed, so no call
// can be optimised away. scripts/benchmark.sh builds everything and passes GeographicLib's
// figures in, so the table also shows the Swift / C++ ratio for the geodesic inverse.
import ArgumentParser
import QiblaCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: Deterministic input

/// The points every benchmark (Swift and C++) uses: Knuth's MMIX 64-bit LCG
/// x ← 6364136223846793005·x + 1442695040888963407 (mod 2⁶⁴), seed 20250101;
/// u = (x >> 11)·2⁻⁵³ in [0, 1); latitude = −89 + 178·u₁, longitude = −180 + 360·u₂, height = 500·u₃ m.
struct BenchmarkPoints {
    static let seed: UInt64 = 20_250_101

    static func generate(count: Int) -> [GeodeticPosition] {
        var state = seed
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) * 0x1p-53
        }
        return (0..<count).map { _ in
            let latitude = -89 + 178 * next()
            let longitude = -180 + 360 * next()
            let height = 500 * next()
            return GeodeticPosition(uncheckedLatitude: latitude, longitude: longitude, heightMetres: height)
        }
    }

    /// Σ(latitude + longitude/1000): printed by both drivers to prove they used the same points.
    static func checksum(_ points: [GeodeticPosition]) -> Double {
        points.reduce(0) { $0 + $1.latitudeDegrees + $1.longitudeDegrees / 1000 }
    }
}

// MARK: Timing

/// Monotonic nanoseconds (CLOCK_MONOTONIC).
@inline(__always) func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

struct Measurement {
    var name: String
    var medianNanoseconds: Double
    var p90Nanoseconds: Double
    var batches: Int
    var callsPerBatch: Int
}

/// Runs `body` over all points `batches` times (after `warmup` untimed batches); one sample per batch.
func measure(_ name: String, points: [GeodeticPosition], batches: Int, warmup: Int,
             sink: inout Double, _ body: (GeodeticPosition) -> Double) -> Measurement {
    var samples: [Double] = []
    samples.reserveCapacity(batches)
    for batch in 0..<(warmup + batches) {
        let start = monotonicNanoseconds()
        var local = 0.0
        for point in points { local += body(point) }
        let elapsed = monotonicNanoseconds() - start
        sink += local
        if batch >= warmup { samples.append(Double(elapsed) / Double(points.count)) }
    }
    samples.sort()
    return Measurement(name: name, medianNanoseconds: percentile(samples, 0.5), p90Nanoseconds: percentile(samples, 0.9),
                       batches: batches, callsPerBatch: points.count)
}

/// Nearest-rank percentile of sorted samples.
func percentile(_ sorted: [Double], _ q: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

// MARK: Benchmarks

enum BenchmarkName: String, CaseIterable, ExpressibleByArgument {
    case greatCircle = "great-circle"
    case geodesicInverse = "geodesic-inverse"
    case qiblaSolve = "qibla-solve"
    case wmm
}

/// Great-circle initial bearing to the Kaaba on the sphere (the formula the Adhan libraries use):
/// θ = atan2(sin Δλ cos φ₂, cos φ₁ sin φ₂ − sin φ₁ cos φ₂ cos Δλ). Timed on its own as the cheapest
/// possible Qibla; `Qibla.solve` includes it together with the geodesic.
@inline(never) func greatCircleBearingDegrees(from p: GeodeticPosition, to k: GeodeticPosition) -> Double {
    let phi1 = Angle.radians(p.latitudeDegrees), phi2 = Angle.radians(k.latitudeDegrees)
    let deltaLambda = Angle.radians(k.longitudeDegrees - p.longitudeDegrees)
    let y = sin(deltaLambda) * cos(phi2)
    let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(deltaLambda)
    return Angle.normalized360(Angle.degrees(atan2(y, x)))
}

// MARK: Report

func formatted(_ value: Double, decimals: Int = 1) -> String {
    guard value.isFinite else { return "–" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let fraction = text.distance(from: dot, to: text.endIndex) - 1
        if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}

func cpuModel() -> String {
    guard let file = fopen("/proc/cpuinfo", "r") else { return "unknown CPU" }
    defer { fclose(file) }
    var cores = 0
    var model = "unknown CPU"
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, file) > 0 {
        let text = String(cString: line!)
        if text.hasPrefix("model name") {
            cores += 1
            if let colon = text.firstIndex(of: ":") {
                model = String(text[text.index(after: colon)...]).trimmingWhitespace()
            }
        }
    }
    free(line)
    return cores > 0 ? "\(model) (\(cores) logical CPUs)" : model
}

func utcTimestamp() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

func writeFile(_ path: String, _ text: String) throws(BenchError) {
    guard let file = fopen(path, "w") else { throw .cannotWrite(path) }
    defer { fclose(file) }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, file) == bytes.count else { throw .cannotWrite(path) }
}

enum BenchError: Error, CustomStringConvertible {
    case cannotWrite(String)
    var description: String {
        switch self { case .cannotWrite(let path): "cannot write \(path)" }
    }
}

// MARK: Command

@main
struct QiblaBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qibla-bench",
        abstract: "Median and p90 nanoseconds per call of the QiblaCore hot paths, as a markdown table.")

    @Option(help: "Points per batch (calls per sample).")
    var points = 1000

    @Option(help: "Timed batches per benchmark.")
    var batches = 300

    @Option(help: "Untimed warm-up batches per benchmark.")
    var warmup = 20

    @Option(parsing: .upToNextOption, help: "Benchmarks to run: \(BenchmarkName.allCases.map(\.rawValue).joined(separator: ", ")).")
    var only: [BenchmarkName] = BenchmarkName.allCases

    @Option(help: "GeographicLib Geodesic::Inverse median, ns per call (from scripts/geographiclib_bench.cpp).")
    var cppMedianNs: Double?

    @Option(help: "GeographicLib Geodesic::Inverse p90, ns per call.")
    var cppP90Ns: Double?

    @Option(help: "The C++ driver's point checksum, to confirm both used the same points.")
    var cppPointsChecksum: Double?

    @Option(help: "GeographicLib version string for the report.")
    var cppLibrary = "GeographicLib"

    @Option(help: "Swift compiler version line for the report (e.g. the first line of `swift --version`).")
    var swiftVersion = "unknown"

    @Option(help: "The command that produced these numbers, recorded in the report.")
    var command = "swift run -c release qibla-bench"

    @Option(help: "Markdown file to write or update between the qibla-bench markers (none: print only).")
    var output: String?

    @Flag(help: "Print the generated points' checksum and exit.")
    var printChecksum = false

    mutating func run() throws {
        let points = BenchmarkPoints.generate(count: points)
        let checksum = BenchmarkPoints.checksum(points)
        if printChecksum {
            print(formatted(checksum, decimals: 9))
            return
        }
        let kaaba = Qibla.defaultKaaba
        let qibla = Qibla()
        let geodesic = Geodesic.wgs84
        let model = MagneticModel.wmm2025
        var sink = 0.0
        var results: [BenchmarkName: Measurement] = [:]
        for name in BenchmarkName.allCases where only.contains(name) {
            switch name {
            case .greatCircle:
                results[name] = measure("Great-circle Qibla bearing (spherical formula)", points: points,
                                        batches: batches, warmup: warmup, sink: &sink) {
                    greatCircleBearingDegrees(from: $0, to: kaaba)
                }
            case .geodesicInverse:
                results[name] = measure("`Geodesic.wgs84.inverse(from:to:)` (WGS84, to the Kaaba)", points: points,
                                        batches: batches, warmup: warmup, sink: &sink) {
                    let r = geodesic.inverse(from: $0, to: kaaba)
                    return r.distanceMetres + r.initialAzimuthDegrees
                }
            case .qiblaSolve:
                results[name] = measure("`Qibla().solve(from:)` (great circle + geodesic + distance)", points: points,
                                        batches: batches, warmup: warmup, sink: &sink) {
                    let s = qibla.solve(from: $0)
                    return s.distanceMetres + (s.geodesicBearing.value ?? 0) + (s.greatCircleBearing.value ?? 0)
                }
            case .wmm:
                results[name] = measure("`MagneticModel.wmm2025.field(at:decimalYear:)` (degree 12 + SV)",
                                        points: points, batches: batches, warmup: warmup, sink: &sink) {
                    let f = model.field(at: $0, decimalYear: 2027.5)
                    return f.declinationDegrees + f.totalNanotesla
                }
            }
        }

        var lines: [String] = []
        lines.append("| Benchmark | median ns/call | p90 ns/call |")
        lines.append("|---|---:|---:|")
        for name in BenchmarkName.allCases {
            guard let m = results[name] else { continue }
            lines.append("| \(m.name) | \(formatted(m.medianNanoseconds)) | \(formatted(m.p90Nanoseconds)) |")
        }
        if let cppMedianNs {
            lines.append("| \(cppLibrary) `Geodesic::WGS84().Inverse` (C++, g++ -O2, same points) "
                + "| \(formatted(cppMedianNs)) | \(formatted(cppP90Ns ?? .nan)) |")
        }
        var notes: [String] = []
        if let cppMedianNs, let swift = results[.geodesicInverse] {
            let ratio = swift.medianNanoseconds / cppMedianNs
            notes.append("Geodesic inverse, Swift / C++ median ratio: **\(formatted(ratio, decimals: 2))** "
                + "(goal ≤ 1.00: \(ratio <= 1 ? "met" : "not met")).")
        }
        if let wmm = results[.wmm] {
            notes.append("WMM2025 evaluation: **\(formatted(wmm.medianNanoseconds / 1000, decimals: 2)) µs** median "
                + "(goal < 10 µs: \(wmm.medianNanoseconds < 10_000 ? "met" : "not met")).")
        }
        if let cppPointsChecksum {
            let same = abs(cppPointsChecksum - checksum) <= 1e-6 * max(1, abs(checksum))
            notes.append("Input points: \(points.count), checksum Swift \(formatted(checksum, decimals: 6)) / "
                + "C++ \(formatted(cppPointsChecksum, decimals: 6)) (\(same ? "identical" : "DIFFERENT — ratio invalid")).")
        } else {
            notes.append("Input points: \(points.count), checksum \(formatted(checksum, decimals: 6)).")
        }

        let machine = cpuModel()
        let date = utcTimestamp()
        let section = """
            <!-- qibla-bench:begin (generated by qibla-bench; edit outside the markers) -->
            ## Latest run

            - Date: \(date)
            - Machine: \(machine)
            - Swift: \(swiftVersion)
            - Command: `\(command)`
            - Method: \(batches) timed batches (after \(warmup) warm-up) of \(points.count) calls each; one sample = batch time / calls.

            \(lines.joined(separator: "\n"))

            \(notes.map { "- " + $0 }.joined(separator: "\n"))
            <!-- qibla-bench:end -->
            """
        print(lines.joined(separator: "\n"))
        print("")
        for note in notes { print(note) }
        print("(machine: \(machine); sink \(formatted(sink, decimals: 0)))")

        if let output {
            let existing = readFile(output) ?? "# Benchmarks\n\n"
            try writeFile(output, replacingGeneratedSection(in: existing, with: section))
            print("updated \(output)")
        }
    }
}

/// Replaces the text between the qibla-bench markers, or appends the section if there are none.
func replacingGeneratedSection(in document: String, with section: String) -> String {
    let begin = "<!-- qibla-bench:begin"
    let end = "<!-- qibla-bench:end -->"
    if let start = document.firstRange(of: begin), let stop = document.firstRange(of: end), start.lowerBound < stop.lowerBound {
        return String(document[..<start.lowerBound]) + section + String(document[stop.upperBound...])
    }
    let separator = document.hasSuffix("\n") ? "\n" : "\n\n"
    return document + separator + section + "\n"
}
