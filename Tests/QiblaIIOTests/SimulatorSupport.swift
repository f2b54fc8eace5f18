// SPDX-License-Identifier: Apache-2.0
// Helpers for the simulator tests: reading the fake sysfs tree back the way a consumer would.
import Foundation
import QiblaCore
import QiblaSimulator

enum SimulatorTestError: Error { case missing(String), unparsable(String) }

func readText(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else { throw SimulatorTestError.missing(path) }
    return String(decoding: data, as: UTF8.self)
}

func readNumber(_ path: String) throws -> Double {
    let text = try readText(path).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let v = Double(text) else { throw SimulatorTestError.unparsable("\(path): \(text)") }
    return v
}

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

func isFIFO(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
}

/// What a consumer computes from the sysfs files: M · ((raw + offset) × scale), in gauss or m/s²,
/// returned in µT (magnetometer) or m/s² (accelerometer), plus the worst per-component quantisation
/// bound in the same unit.
func readBack(directory: String, kind: SensorKind) throws -> (value: Vector3, quantisation: Double) {
    let t = kind.channelType
    let offset = fileExists("\(directory)/in_\(t)_offset") ? try readNumber("\(directory)/in_\(t)_offset") : 0
    var sensor: [Double] = []
    var largestScale = 0.0
    for axis in ["x", "y", "z"] {
        let raw = try readNumber("\(directory)/in_\(t)_\(axis)_raw")
        let scalePath = fileExists("\(directory)/in_\(t)_\(axis)_scale")
            ? "\(directory)/in_\(t)_\(axis)_scale" : "\(directory)/in_\(t)_scale"
        let scale = try readNumber(scalePath)
        largestScale = max(largestScale, scale)
        sensor.append((raw + offset) * scale)
    }
    var matrix = Matrix3.identity
    for name in ["mount_matrix", "in_mount_matrix", "in_\(t)_mount_matrix"] where fileExists("\(directory)/\(name)") {
        matrix = try parseMountMatrixOrThrow(try readText("\(directory)/\(name)"))
    }
    let unit = 1 / kind.kernelUnitsPerSimulatorUnit
    let device = matrix * Vector3(sensor[0], sensor[1], sensor[2]) * unit
    let rowSum = [matrix.row0, matrix.row1, matrix.row2].map { abs($0.x) + abs($0.y) + abs($0.z) }.max()!
    return (device, 0.5 * largestScale * unit * rowSum * 1.0001)
}

func maxComponentDifference(_ a: Vector3, _ b: Vector3) -> Double {
    max(abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z))
}

/// A fresh directory for one test, removed at deinit.
final class ScratchDirectory {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "qibla-sim-test-" + UUID().uuidString.prefix(8)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    var sysfs: String { path + "/sys" }
    var dev: String { path + "/dev" }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
