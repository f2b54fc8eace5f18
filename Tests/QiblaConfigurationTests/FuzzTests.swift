// SPDX-License-Identifier: Apache-2.0
import QiblaConfiguration
import QiblaCore
import QiblaSimulator
import QiblaState
import Testing

/// The simulator's seeded SplitMix64: every fuzz run is reproducible.
typealias SeededGenerator = SplitMix64

/// Random text that is mostly almost right: known keys with hostile values, garbage lines.
struct HostileText {
    var rng: SeededGenerator

    static let numbers = [
        "0", "-0.0", "1", "-1", "0.5", "1e-3", "1e308", "1e309", "-1e999", "1e-400", "nan", "NaN", "-nan", "inf",
        "-inf", "infinity", "0x10", "0,5", "1,5", "99999999999999999999999", "+3", ".5", "5.", "1_000", "٣", "１",
        "", " ", "--1", "1e", "e5", "0.1.2", "21.4225241", "39.8261818", "-33.9", "18.4", "200", "3600", "0.02",
    ]
    static let words = [
        "great-circle", "geodesic", "none", "off", "polling", "buffered", "localhost:2947", "[::1]:3000", "[::1",
        "host:0", "host:65536", "a:b:c", ":", "lis3mdl", "0, 1, 0; 1, 0, 0; 0, 0, -1", "0,0,0;0,1,0;0,0,1",
        "1,0;0,1", "nan, 0, 0; 0, 1, 0; 0, 0, 1", "1e309, 0, 0; 0, 1, 0; 0, 0, 1", ";;", ",,", "ellipsoid", "sphere",
        "\u{0}", "é", "🧭", String(repeating: "x", count: 3000),
    ]
    static let keys = Array(DaemonConfiguration.knownKeys) + [
        "latitude", "longitude", "height-m", "accuracy-m", "timestamp", "format", "device-name", "device-path", "kind",
        "hard-iron-offset-ut", "soft-iron-matrix", "field-ut", "residual-ut", "eigenvalue-spread", "samples",
        "unknown-key", "", " ", "=",
    ]

    mutating func pick<T>(_ array: [T]) -> T { array[Int(rng.next() % UInt64(array.count))] }

    mutating func value() -> String {
        switch rng.next() % 6 {
        case 0: return pick(Self.words)
        case 1: return "\(pick(Self.numbers)), \(pick(Self.numbers))"
        case 2: return (0..<(1 + Int(rng.next() % 9))).map { _ in pick(Self.numbers) }.joined(separator: ", ")
        case 3: return String(Double(bitPattern: rng.next()))
        default: return pick(Self.numbers)
        }
    }

    mutating func line() -> String {
        switch rng.next() % 10 {
        case 0: return "# " + value()
        case 1: return "[qiblad]"
        case 2: return value()                       // no '='
        case 3: return String((0..<Int(rng.next() % 40)).map { _ in Character(Unicode.Scalar(UInt8(rng.next() % 128))) })
        default: return "\(pick(Self.keys)) = \(value())"
        }
    }

    mutating func document() -> String {
        (0..<Int(rng.next() % 10)).map { _ in line() }.joined(separator: rng.next() % 7 == 0 ? "\r\n" : "\n")
    }
}

@Suite struct FuzzTests {
    static let cases = 100_000

    @Test func theConfigurationParserGivesATypedErrorOrValuesInRange() {
        var text = HostileText(rng: SeededGenerator(seed: 0x51B1_A0C0))
        var accepted = 0, rejected = 0
        for _ in 0..<Self.cases {
            let input = text.document()
            do {
                let (c, _) = try DaemonConfiguration.parse(input)
                accepted += 1
                let compass = c.model.compass, interference = compass.calibrator.interference
                #expect((1...100).contains(c.publishing.maxSignalRateHertz))
                #expect((0...5).contains(compass.smoothingWindowSeconds))
                #expect((1...200).contains(c.sensors.sampleRateHertz))
                #expect(c.gpsd.map { (1...3600).contains($0.fixTimeoutSeconds) && (1...65535).contains($0.port) } ?? true)
                #expect((0.02...1).contains(interference.fieldToleranceFraction))
                #expect((1...45).contains(interference.inclinationToleranceDegrees))
                #expect(c.model.qibla.kaaba.latitudeDegrees.isFinite && c.model.qibla.kaaba.longitudeDegrees.isFinite)
                for m in [c.sensors.magnetometerMountMatrixOverride, c.sensors.accelerometerMountMatrixOverride] {
                    if let m { #expect(m.isFinite && m.row0 != .zero && m.row1 != .zero && m.row2 != .zero, "\(input)") }
                }
            } catch {
                rejected += 1
                #expect(error.line >= 1 && error.line <= input.split(separator: "\n", omittingEmptySubsequences: false).count,
                        "\(error) for \(input.debugDescription)")
            }
        }
        print("fuzz: configuration parser, \(Self.cases) cases: \(accepted) accepted, \(rejected) rejected with a line number")
        #expect(accepted > 100 && rejected > 100, "the generator reaches both outcomes")
    }

    @Test func stateDocumentsDecodeToValidValuesOrAReason() {
        var text = HostileText(rng: SeededGenerator(seed: 0x5747_E000))
        var locations = 0, calibrations = 0, unparsable = 0
        for i in 0..<Self.cases {
            var input = text.document()
            // Every fourth case starts from a valid file and corrupts one value.
            if i % 4 == 0 {
                input = """
                    latitude = \(text.pick(HostileText.numbers))
                    longitude = 18.4
                    device-name = lis3mdl
                    device-path = /sys/devices/x
                    kind = ellipsoid
                    hard-iron-offset-ut = 10, -20, 30
                    soft-iron-matrix = 1, 0, 0, 0, 1, 0, 0, 0, \(text.pick(HostileText.numbers))
                    field-ut = \(text.pick(HostileText.numbers))
                    residual-ut = 0.3
                    eigenvalue-spread = 1.1
                    samples = 120
                    """ + "\n" + text.line()
            }
            guard let document = try? KeyValueDocument.parse(input) else { unparsable += 1; continue }
            if case .success(let l) = StateStore.location(from: document) {
                locations += 1
                let p = l.position
                #expect((-90...90).contains(p.latitudeDegrees) && p.longitudeDegrees >= -180 && p.longitudeDegrees < 180)
                #expect(p.heightMetres.isFinite && l.timestampUnixSeconds.isFinite && l.timestampUnixSeconds >= 0)
                #expect(l.horizontalAccuracyMetres.map { $0.isFinite && $0 >= 0 } ?? true)
            }
            if case .success(let c) = StateStore.calibration(from: document, deviceName: "lis3mdl", devicePath: "/sys/devices/x") {
                calibrations += 1
                let fit = c.fit
                #expect(fit.calibration.isValid && fit.fieldMicrotesla.isFinite && fit.residualRMSMicrotesla.isFinite)
                #expect(fit.hardIronOffsetMicrotesla.length <= 1e4 && c.timestampUnixSeconds >= 0)
                let corrected = fit.calibration.apply(Vector3(30, -20, 40))
                #expect(corrected.isFinite, "a stored fit never turns a sample into a non-finite value")
            }
        }
        print("fuzz: state documents, \(Self.cases) cases: \(locations) valid locations, \(calibrations) valid calibrations, \(unparsable) not key = value")
        #expect(locations > 100 && calibrations > 100)
    }
}
