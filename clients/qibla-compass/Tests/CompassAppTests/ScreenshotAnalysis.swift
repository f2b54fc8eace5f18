// SPDX-License-Identifier: Apache-2.0
import CGtk
import Foundation

/// A screenshot's pixels (loaded through GdkTexture, as GTK wrote them) and the dial's parts found
/// by colour: the hub at the centre, the needle, and north (its triangle and its N). Angles are
/// degrees clockwise from the top of the image, as a person sees the screen.
struct Screenshot {
    let width: Int
    let height: Int
    /// RGBA, 8 bits each, row after row.
    private let pixels: [UInt8]

    init(path: String) throws {
        let file = g_file_new_for_path(path)
        defer { g_object_unref(UnsafeMutableRawPointer(file)) }
        var error: UnsafeMutablePointer<GError>?
        guard let texture = gdk_texture_new_from_file(file, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "?"
            if let error { g_error_free(error) }
            throw ScreenshotError.unreadable(path, message)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
        let width = Int(gdk_texture_get_width(texture)), height = Int(gdk_texture_get_height(texture))
        self.width = width
        self.height = height
        // gdk_texture_download writes CAIRO_FORMAT_ARGB32: native-endian 32-bit ARGB, premultiplied
        // (B, G, R, A in memory on little-endian machines).
        var bgra = [UInt8](repeating: 0, count: width * height * 4)
        bgra.withUnsafeMutableBufferPointer { gdk_texture_download(texture, $0.baseAddress, gsize(width * 4)) }
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: bgra.count, by: 4) {
            let a = Double(bgra[i + 3])
            func unpremultiply(_ c: UInt8) -> UInt8 { a == 0 ? 0 : UInt8(min(255, (Double(c) * 255 / a).rounded())) }
            rgba[i] = unpremultiply(bgra[i + 2]); rgba[i + 1] = unpremultiply(bgra[i + 1]); rgba[i + 2] = unpremultiply(bgra[i]); rgba[i + 3] = bgra[i + 3]
        }
        pixels = rgba
    }

    /// The pixels within `tolerance` (per channel) of a colour, as (x, y).
    func points(near colour: (Int, Int, Int), tolerance: Int = 12) -> [(Double, Double)] {
        var found: [(Double, Double)] = []
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                if pixels[i + 3] > 200,
                   abs(Int(pixels[i]) - colour.0) <= tolerance, abs(Int(pixels[i + 1]) - colour.1) <= tolerance,
                   abs(Int(pixels[i + 2]) - colour.2) <= tolerance {
                    found.append((Double(x), Double(y)))
                }
            }
        }
        return found
    }

    static func centroid(_ points: [(Double, Double)]) -> (Double, Double)? {
        guard !points.isEmpty else { return nil }
        let n = Double(points.count)
        return (points.reduce(0) { $0 + $1.0 } / n, points.reduce(0) { $0 + $1.1 } / n)
    }

    /// The dial as the pixels show it.
    struct Dial {
        var centre: (Double, Double)
        /// The needle's direction, degrees clockwise from the top of the image.
        var needleDegrees: Double?
        /// Where north is drawn.
        var northDegrees: Double?
        var needlePixels: Int
        var northPixels: Int
    }

    /// Finds the hub (its centroid is the dial's centre), then the direction from it to the
    /// centroid of the needle's pixels and of north's. The colours are DialView's.
    func dial() -> Dial? {
        let hub = points(near: (53, 132, 228))
        guard hub.count > 20, let centre = Self.centroid(hub) else { return nil }
        func direction(_ pts: [(Double, Double)]) -> Double? {
            // Pixels right at the hub say nothing about a direction.
            let away = pts.filter { hypot($0.0 - centre.0, $0.1 - centre.1) > 15 }
            guard away.count > 20, let c = Self.centroid(away) else { return nil }
            let degrees = atan2(c.0 - centre.0, -(c.1 - centre.1)) * 180 / .pi
            return (degrees + 360).truncatingRemainder(dividingBy: 360)
        }
        let needle = points(near: (38, 162, 105))
        let north = points(near: (224, 27, 36))
        return Dial(centre: centre, needleDegrees: direction(needle), northDegrees: direction(north),
                    needlePixels: needle.count, northPixels: north.count)
    }
}

enum ScreenshotError: Error, CustomStringConvertible {
    case unreadable(String, String)
    var description: String {
        switch self { case .unreadable(let path, let message): "cannot read \(path): \(message)" }
    }
}

/// The signed difference a − b, degrees in (−180, 180].
func angleDifference(_ a: Double, _ b: Double) -> Double {
    var d = (a - b).truncatingRemainder(dividingBy: 360)
    if d > 180 { d -= 360 }
    if d <= -180 { d += 360 }
    return d
}
