// SPDX-License-Identifier: Apache-2.0
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
import QiblaPlatform

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

/// Monotonic nanoseconds (CLOCK_MONOTONIC), read once per batch.
@inline(__always) func monotonicNanoseconds() -> UInt64 { UInt64(MonotonicClock.nowNanoseconds()) }

struct Measurement {
    var name: String
    var medianNanoseconds: Double
    var p90Nanoseconds: Double
    var batches: Int
    var callsPerBatch: Int
}

/// Runs `body` over all inputs `batches` times (after `warmup` untimed batches); one sample per batch.
///
/// `@inline(__always)` so the benchmarked closure is inlined into the timing loop, as the C++
/// driver's loop body is: otherwise every call pays an indirect closure call that GeographicLib's
/// figure does not include.
@inline(__always)
func measure<Input>(_ name: String, inputs: [Input], batches: Int, warmup: Int,
                    sink: inout Double, _ body: (Input) -> Double) -> Measurement {
    var samples: [Double] = []
    samples.reserveCapacity(batches)
    for batch in 0..<(warmup + batches) {
        let start = monotonicNanoseconds()
        var local = 0.0
        for input in inputs { local += body(input) }
        let elapsed = monotonicNanoseconds() - start
        sink += local
        if batch >= warmup { samples.append(Double(elapsed) / Double(inputs.count)) }
    }
    samples.sort()
    return Measurement(name: name, medianNanoseconds: percentile(samples, 0.5), p90Nanoseconds: percentile(samples, 0.9),
                       batches: batches, callsPerBatch: inputs.count)
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
    case headingPipeline = "heading-pipeline"
    case accuracy
    case calibration
    case sunPosition = "sun-position"
    case qiblaSunDay = "qibla-sun-day"
    case samplePath = "sample-path"
    case attitudeFilter = "attitude-filter"
    case samplePathFused = "sample-path-fused"
}

/// One magnetometer + accelerometer sample pair, as the daemon feeds `HeadingPipeline.update`.
struct SensorSample {
    /// Raw magnetometer reading, microtesla, device frame.
    var magnetic: Vector3
    /// Accelerometer reading (reaction to gravity), m/s², device frame.
    var acceleration: Vector3
}

/// A realistic 20 Hz stream: a phone held in the hand at London (WMM2025 horizontal field about
/// 19.6 µT, vertical about 45.3 µT down), tilted 10–25° towards the user with a slow wobble,
/// turning at 10°/s, with ±0.4 µT magnetometer and ±0.05 m/s² accelerometer noise (uniform, from
/// the same LCG as the points, seed + 1). Device frame as Android/IIO: x right, y top edge,
/// z out of the screen.
enum SensorStream {
    /// The gyroscope the stream implies at `t` seconds: the heading turns at 10 °/s about the
    /// vertical and the pitch p = 17.5° + 7.5° sin(0.7 t) about the device x axis, so
    /// ω = (ṗ, −ψ̇ sin p, −ψ̇ cos p) rad/s, plus ±0.002 rad/s of noise from `index`.
    static func angularVelocity(at t: Double, index: Int) -> Vector3 {
        let pitch = Angle.radians(17.5 + 7.5 * sin(0.7 * t))
        let pitchRate = Angle.radians(7.5 * 0.7 * cos(0.7 * t)), headingRate = Angle.radians(10)
        let wobble = Double((index &* 2_654_435_761) % 1000) / 1000 * 0.004 - 0.002
        return Vector3(pitchRate + wobble, -headingRate * sin(pitch), -headingRate * cos(pitch))
    }

    static func generate(count: Int) -> [SensorSample] {
        var state = BenchmarkPoints.seed &+ 1
        func noise(_ amplitude: Double) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) * 0x1p-53 * 2 - 1) * amplitude
        }
        let horizontal = 19.6, down = 45.3, gravity = 9.806_65
        return (0..<count).map { i in
            let t = Double(i) * 0.05
            let heading = Angle.radians(10 * t)            // top edge, clockwise from magnetic north
            let pitch = Angle.radians(17.5 + 7.5 * sin(0.7 * t))  // top edge raised above the horizon
            // World (east, north, up) field and up vector, rotated into the device frame:
            // first about up by the heading, then about the device x axis by the pitch.
            let eastWorld = 0.0, northWorld = horizontal, upWorld = -down
            let xAlongHeading = eastWorld * cos(heading) - northWorld * sin(heading)
            let yAlongHeading = eastWorld * sin(heading) + northWorld * cos(heading)
            let magnetic = Vector3(
                xAlongHeading + noise(0.4),
                yAlongHeading * cos(pitch) + upWorld * sin(pitch) + noise(0.4),
                -yAlongHeading * sin(pitch) + upWorld * cos(pitch) + noise(0.4))
            let acceleration = Vector3(
                noise(0.05),
                gravity * sin(pitch) + noise(0.05),
                gravity * cos(pitch) + noise(0.05))
            return SensorSample(magnetic: magnetic, acceleration: acceleration)
        }
    }
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
    guard let text = FileSystem.readText("/proc/cpuinfo") else { return "unknown CPU" }
    var cores = 0
    var model = "unknown CPU"
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
        cores += 1
        if let colon = line.firstIndex(of: ":") {
            model = String(line[line.index(after: colon)...]).trimmingWhitespace()
        }
    }
    return cores > 0 ? "\(model) (\(cores) logical CPUs)" : model
}

func utcTimestamp() -> String {
    let now = WallClock.utc(unixSeconds: WallClock.nowUnixSeconds())
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(now.year)-\(two(now.month))-\(two(now.day)) \(two(now.hour)):\(two(now.minute)) UTC"
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

func readFile(_ path: String) -> String? { FileSystem.readText(path, limit: 16 << 20) }

func writeFile(_ path: String, _ text: String) throws(BenchError) {
    do {
        try FileSystem.writeFileAtomically(path, Array(text.utf8), permissions: [.ownerReadWrite, .groupRead, .otherRead])
    } catch {
        throw .cannotWrite(path)
    }
}

enum BenchError: Error, CustomStringConvertible {
    case cannotWrite(String)
    var description: String {
        switch self { case .cannotWrite(let path): "cannot write \(path)" }
    }
}

// MARK: Command

// Started from the last line (not `@main`): the target has more than one file.
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
        var notes: [String] = []
        for name in BenchmarkName.allCases where only.contains(name) {
            switch name {
            case .greatCircle:
                results[name] = measure("`GreatCircle.initialBearingDegrees(from:to:)` (spherical, to the Kaaba)",
                                        inputs: points, batches: batches, warmup: warmup, sink: &sink) {
                    GreatCircle.initialBearingDegrees(from: $0, to: kaaba) ?? 0
                }
            case .geodesicInverse:
                results[name] = measure("`Geodesic.wgs84.inverse(from:to:)` (WGS84, to the Kaaba)",
                                        inputs: points, batches: batches, warmup: warmup, sink: &sink) {
                    let r = geodesic.inverse(from: $0, to: kaaba)
                    return r.distanceMetres + r.initialAzimuthDegrees
                }
            case .qiblaSolve:
                results[name] = measure("`Qibla().solve(from:)` (great circle + geodesic + distance)",
                                        inputs: points, batches: batches, warmup: warmup, sink: &sink) {
                    let s = qibla.solve(from: $0)
                    return s.distanceMetres + (s.geodesicBearing.value ?? 0) + (s.greatCircleBearing.value ?? 0)
                }
            case .wmm:
                results[name] = measure("`MagneticModel.wmm2025.field(at:decimalYear:)` (degree 12 + SV)",
                                        inputs: points, batches: batches, warmup: warmup, sink: &sink) {
                    let f = model.field(at: $0, decimalYear: 2027.5)
                    return f.declinationDegrees + f.totalNanotesla
                }
            case .headingPipeline:
                // One pipeline fed continuously across batches, time advancing 0.05 s (20 Hz) per
                // sample, as in the daemon; the default 0.5 s smoothing window holds 10 samples.
                let stream = SensorStream.generate(count: points.count)
                var pipeline = HeadingPipeline()
                var time = 0.0
                var accepted = 0, rejected = 0
                results[name] = measure("`HeadingPipeline.update(magnetic:acceleration:time:)` (20 Hz hand-held stream)",
                                        inputs: stream, batches: batches, warmup: warmup, sink: &sink) { sample in
                    time += 0.05
                    switch pipeline.update(magnetic: sample.magnetic, acceleration: sample.acceleration, time: time) {
                    case .success(let estimate):
                        accepted += 1
                        return estimate.magneticHeadingDegrees + estimate.spreadDegrees
                    case .failure:
                        rejected += 1
                        return 0
                    }
                }
                notes.append("Heading pipeline: \(accepted) of \(accepted + rejected) samples gave an estimate "
                    + "(a rejection would be timed on its short path).")
            case .calibration:
                (results[name], notes) = { let r = CalibrationBenchmarks.run(points: points.count, batches: batches, warmup: warmup, sink: &sink); return (r.0, notes + r.1) }()
            case .sunPosition:
                (results[name], notes) = { let r = SunBenchmarks.solarPosition(points: points, batches: batches, warmup: warmup, sink: &sink); return (r.0, notes + r.1) }()
            case .qiblaSunDay:
                (results[name], notes) = { let r = SunBenchmarks.qiblaSunDay(points: points, batches: batches, warmup: warmup, sink: &sink); return (r.0, notes + r.1) }()
            case .attitudeFilter:
                // The same hand-held stream with the gyroscope it implies
                // (`SensorStream.angularVelocity(at:index:)`). One filter fed continuously at 20 Hz; each call is one instant: a gyroscope, an
                // accelerometer and a magnetometer sample and the heading read at the instant.
                let stream = SensorStream.generate(count: points.count)
                var filter = AttitudeFilter()
                var index = 0
                var tracked = 0, calls = 0
                results[name] = measure("`AttitudeFilter` gyroscope + accelerometer + magnetometer sample and `heading(at:)` (one 20 Hz instant)",
                                        inputs: stream, batches: batches, warmup: warmup, sink: &sink) { sample in
                    let t = Double(index) * 0.05
                    index += 1
                    filter.addAngularVelocity(SensorStream.angularVelocity(at: t, index: index), time: t)
                    filter.addAcceleration(sample.acceleration, time: t + 0.01)
                    filter.addMagneticField(sample.magnetic, time: t + 0.02)
                    calls += 1
                    guard let heading = filter.heading(at: t + 0.025) else { return 0 }
                    tracked += 1
                    return heading.magneticHeadingDegrees + heading.sigmaDegrees
                }
                notes.append("Attitude filter: \(tracked) of \(calls) instants gave a heading; magnetometer state at the end: "
                    + "\(filter.magneticState.rawValue). Per single sample: about a third of the row (three samples an instant).")
            case .samplePath, .samplePathFused:
                let r = SamplePathBenchmarks.run(points: points.count, batches: batches, warmup: warmup, sink: &sink,
                                                 gyroscope: name == .samplePathFused)
                results[name] = r.0
                notes += r.1
            case .accuracy:
                // Inputs as the daemon passes them: the pipeline's estimates for the stream, with
                // the WMM2025 field at London as the expectation.
                var pipeline = HeadingPipeline()
                let stream = SensorStream.generate(count: points.count)
                var estimates: [HeadingEstimate] = []
                for (i, sample) in stream.enumerated() {
                    if case .success(let e) = pipeline.update(magnetic: sample.magnetic,
                                                              acceleration: sample.acceleration,
                                                              time: Double(i + 1) * 0.05) {
                        estimates.append(e)
                    }
                }
                let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278, heightMetres: 0)
                let expected = model.field(at: london, decimalYear: 2027.5)
                let expectedMicrotesla = expected.totalNanotesla / 1000
                let expectedInclination = expected.inclinationDegrees
                results[name] = measure("`estimateAccuracy(...)` (pipeline estimates vs WMM at London)",
                                        inputs: estimates, batches: batches, warmup: warmup, sink: &sink) { e in
                    let r = estimateAccuracy(spreadDegrees: e.spreadDegrees,
                                             measuredFieldMicrotesla: e.fieldStrengthMicrotesla,
                                             expectedFieldMicrotesla: expectedMicrotesla,
                                             measuredInclinationDegrees: e.inclinationDegrees,
                                             expectedInclinationDegrees: expectedInclination,
                                             calibrated: true)
                    return r.headingErrorDegrees + (r.magneticInterference ? 1 : 0)
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
            - Method: \(batches) timed batches (after \(warmup) warm-up) of \(points.count) calls each (the accuracy row: one call per accepted pipeline estimate); one sample = batch time / calls.

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

QiblaBench.main()
