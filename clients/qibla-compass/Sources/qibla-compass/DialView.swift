// SPDX-License-Identifier: Apache-2.0
import CompassModel

/// The compass dial: a face with ticks and the cardinal points turned so that north is where the
/// phone's heading puts it, the Qibla needle on it, the uncertainty wedge (±HeadingError) around
/// the needle, and a fixed mark at the top for the way the phone points.
///
/// Colours are fixed and distinct, so a test can find each part in a screenshot: the needle
/// ``needleColour``, the hub at the centre ``hubColour``, north (the N and its triangle) ``northColour``.
struct DialView {
    static let needleColour = RGB(bytes: 38, 162, 105)
    static let hubColour = RGB(bytes: 53, 132, 228)
    static let northColour = RGB(bytes: 224, 27, 36)
    static let wedgeColour = RGB(bytes: 246, 211, 45)
    /// The pointing mark while facing the Qibla: green, but not the needle's green.
    static let facingMarkColour = RGB(bytes: 27, 133, 83)
    static let kaabaColour = RGB(bytes: 30, 30, 30)
    static let kaabaBandColour = RGB(bytes: 200, 160, 40)

    /// What to draw.
    struct State: Equatable {
        /// Where north is drawn, degrees clockwise from the top (nil: no heading, north up).
        var northScreenDegrees: Double?
        var qiblaBearingDegrees: Double?
        var wedgeHalfWidthDegrees: Double?
        var isFacing = false
        var dark = false
        /// The largest side the dial is drawn at, pixels (the visible height when the window is
        /// wide: the area itself may be taller than the screen); nil: as large as the area.
        var maximumSide: Double?
    }

    /// The letters' outlines, made once per dial radius.
    final class FaceCache { var radius = 0.0; var letters: [String: CairoPath] = [:] }

    static func draw(_ cr: Cairo, width: Double, height: Double, state: State, cache: FaceCache) {
        let usableHeight = min(height, state.maximumSide ?? height)
        let radius = min(width, usableHeight) / 2 - 14
        guard radius > 20 else { return }
        let cx = width / 2, cy = usableHeight / 2
        let north = state.northScreenDegrees ?? 0
        let foreground = state.dark ? RGB(0.92, 0.92, 0.92) : RGB(0.2, 0.2, 0.22)

        // The face; tinted while facing the Qibla.
        cr.newPath()
        cr.arc(cx, cy, radius: radius)
        if state.isFacing {
            cr.color(needleColour, alpha: state.dark ? 0.30 : 0.18)
        } else {
            cr.color(state.dark ? RGB(0.19, 0.19, 0.2) : RGB(0.98, 0.98, 0.98))
        }
        cr.fillPreserve()
        cr.color(foreground, alpha: 0.35)
        cr.lineWidth(2)
        cr.stroke()

        // The phone's pointing direction: a fixed mark above the face.
        cr.newPath()
        cr.move(cx, cy - radius - 2)
        cr.line(cx - 9, cy - radius - 13)
        cr.line(cx + 9, cy - radius - 13)
        cr.close()
        cr.color(state.isFacing ? facingMarkColour : foreground)
        cr.fill()

        // Ticks, letters and north, turned with the heading. The letters' outlines are made once
        // per size (cairo_text_path) and filled as paths each frame: a turning dial rasterises no
        // glyphs, so FreeType's hinter does not run per frame and per angle.
        if cache.radius != radius { cache.radius = radius; cache.letters = [:] }
        cr.save()
        cr.translate(cx, cy)
        cr.rotate(degrees: north)
        drawTurningFace(cr, radius: radius, foreground: foreground, cache: cache)
        cr.restore()

        guard let bearing = state.qiblaBearingDegrees else {
            drawHub(cr, cx: cx, cy: cy, radius: radius)
            return
        }
        let needleScreen = north + bearing
        let hasHeading = state.northScreenDegrees != nil

        // The uncertainty wedge around the needle.
        if hasHeading, let halfWidth = state.wedgeHalfWidthDegrees, halfWidth > 0.2 {
            cr.newPath()
            cr.move(cx, cy)
            cr.arc(cx, cy, radius: radius * 0.8, from: needleScreen - halfWidth, to: needleScreen + halfWidth)
            cr.close()
            cr.color(wedgeColour, alpha: 0.35)
            cr.fill()
        }

        // The needle, with the Kaaba at its tip.
        cr.save()
        cr.translate(cx, cy)
        cr.rotate(degrees: needleScreen)
        let alpha = hasHeading ? 1.0 : 0.45
        cr.newPath()
        cr.move(0, 0)
        cr.line(0, -radius * 0.66)
        cr.color(needleColour, alpha: alpha)
        cr.lineWidth(max(5, radius * 0.035))
        cr.roundCaps()
        cr.stroke()
        let side = max(14, radius * 0.12)
        let top = -radius * 0.66 - side
        cr.newPath()
        cr.move(-side / 2, top); cr.line(side / 2, top); cr.line(side / 2, top + side); cr.line(-side / 2, top + side); cr.close()
        cr.color(kaabaColour, alpha: alpha)
        cr.fill()
        cr.newPath()
        cr.move(-side / 2, top + side * 0.22); cr.line(side / 2, top + side * 0.22)
        cr.color(kaabaBandColour, alpha: alpha)
        cr.lineWidth(max(2, side * 0.14))
        cr.stroke()
        cr.restore()

        drawHub(cr, cx: cx, cy: cy, radius: radius)
    }

    /// The part of the dial that turns, centred on the origin, north up.
    private static func drawTurningFace(_ cr: Cairo, radius: Double, foreground: RGB, cache: FaceCache) {
        for tick in stride(from: 0, to: 360, by: 10) {
            cr.save()
            cr.rotate(degrees: Double(tick))
            let long = tick % 30 == 0
            cr.newPath()
            cr.move(0, -radius + 3)
            cr.line(0, -radius + (long ? 15 : 9))
            cr.color(foreground, alpha: long ? 0.8 : 0.45)
            cr.lineWidth(long ? 2 : 1)
            cr.stroke()
            cr.restore()
        }
        let letters = [(0.0, tr("N")), (90.0, tr("E")), (180.0, tr("S")), (270.0, tr("W"))]
        for (angle, letter) in letters {
            cr.save()
            cr.rotate(degrees: angle)
            if angle == 0 {
                cr.color(northColour)
                // North's triangle, inside the ticks.
                cr.newPath()
                cr.move(0, -radius + 17)
                cr.line(-8, -radius + 31)
                cr.line(8, -radius + 31)
                cr.close()
                cr.fill()
            } else {
                cr.color(foreground)
            }
            let outline = cache.letters[letter] ?? cr.textOutline(letter, x: 0, y: -radius + 46, size: max(14, radius * 0.12), bold: angle == 0)
            cache.letters[letter] = outline
            cr.fill(outline)
            cr.restore()
        }
    }

    private static func drawHub(_ cr: Cairo, cx: Double, cy: Double, radius: Double) {
        cr.newPath()
        cr.arc(cx, cy, radius: max(6, radius * 0.05))
        cr.color(hubColour)
        cr.fill()
    }
}
