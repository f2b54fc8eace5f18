// SPDX-License-Identifier: Apache-2.0
// QiblaSunTimes.swift — the instants when the sun, or a vertical stick's shadow, shows the Qibla.

/// Which way an instant shows the Qibla.
public enum QiblaSunKind: String, Sendable, CaseIterable {
    /// The sun's azimuth equals the Qibla bearing: face the sun.
    case sun
    /// The sun's azimuth equals the Qibla bearing + 180°: the shadow of a vertical stick points to
    /// the Qibla.
    case shadow

    /// The azimuth the sun must have, degrees in [0, 360), for a Qibla bearing.
    public func sunAzimuthDegrees(qiblaBearingDegrees: Double) -> Double {
        Angle.normalized360(self == .sun ? qiblaBearingDegrees : qiblaBearingDegrees + 180)
    }
}

/// One Qibla-sun instant.
public struct QiblaSunEvent: Sendable, Equatable {
    /// Seconds since the Unix epoch, UTC.
    public var unixSeconds: Double
    public var kind: QiblaSunKind
    /// The sun's azimuth then (the Qibla bearing, or its opposite), degrees in [0, 360).
    public var azimuthDegrees: Double
    /// The sun's apparent elevation then, degrees.
    public var elevationDegrees: Double
}

/// Why a search found no instant.
public enum QiblaSunAbsence: Sendable, Equatable {
    /// The Qibla bearing is undefined here (at the Kaaba, or in the antipodal band).
    case qiblaUndefined(QiblaUndefinedReason)
    /// The sun never reaches the minimum elevation in the interval (polar night, or a winter day
    /// at high latitude).
    case sunTooLow
    /// The sun is up, but while it is high enough its azimuth never equals the Qibla bearing or its
    /// opposite (e.g. a Qibla close to north far north of the tropics).
    case noAlignment
}

/// The Qibla-sun instants of an interval, in time order, or why there are none.
public struct QiblaSunTimes: Sendable, Equatable {
    public var events: [QiblaSunEvent]
    /// Why ``events`` is empty; nil when it is not.
    public var absence: QiblaSunAbsence?
}

/// Finds every instant in an interval when the sun's azimuth equals the Qibla bearing (``QiblaSunKind/sun``)
/// or the bearing + 180° (``QiblaSunKind/shadow``) with the sun at least ``minimumElevationDegrees``
/// above the horizon (a shadow one can see).
///
/// ## Method
/// The sun's place comes from SPA (``SolarPositionAlgorithm``), interpolated over the interval
/// (``SolarDay``). The interval is sampled every ``scanStepSeconds`` (5 minutes); where the azimuth
/// moves by more than 45° between two samples (the sun passing near the zenith) the step is halved
/// until it does not (down to 1 s). On each step g(t) = azimuth − target, reduced to (−180°, 180°],
/// is examined for each kind:
/// - a sign change with |Δg| < 180° brackets a crossing (a change through ±180° is the other
///   kind's crossing), refined with Brent's method (Brent 1973, Ch. 4) to ``toleranceSeconds``;
/// - a turn of g (the azimuth stops and goes back, as in the tropics when the sun passes on the
///   pole side of the zenith) within 10° of zero is located with Brent's minimiser (Ch. 5); when
///   g changes sign there, the two crossings on either side are refined as above. This finds
///   pairs of crossings closer together than one step.
/// At most two crossings of each kind occur in a day above the horizon.
///
/// ## Accuracy
/// The times are those of the SPA azimuth to well below a second (the tolerance is 0.01 s by
/// default; the interpolation adds below 1e-7° of azimuth). `SunSearchTests` checks, with the full
/// SPA, that the azimuth at every instant found equals its target within 0.01°, and that a scan
/// every 20 s of 500 random places and days finds no crossing the search missed.
public struct QiblaSunSearch: Sendable {
    /// Only instants with the sun at least this high (apparent elevation, degrees) count. Default 5°.
    public var minimumElevationDegrees = 5.0
    /// Refraction for the elevation (the azimuth does not depend on it); nil for none.
    public var atmosphere: Atmosphere? = .standard
    /// The scan's step, seconds.
    public var scanStepSeconds = 300.0
    /// Time tolerance of the refined instants, seconds.
    public var toleranceSeconds = 0.01

    public init(minimumElevationDegrees: Double = 5.0, atmosphere: Atmosphere? = .standard) {
        self.minimumElevationDegrees = minimumElevationDegrees
        self.atmosphere = atmosphere
    }

    /// The instants in [start, start + duration] for `position`, with the Qibla bearing of `qibla`
    /// (the great-circle bearing, as published tables; pass ``times(at:qiblaBearingDegrees:from:durationSeconds:deltaTSeconds:)``
    /// another bearing to use it). nil when the interval is not inside
    /// ``SolarPositionAlgorithm/validUnixSeconds`` or the duration is not in (0, 7 days].
    public func times(at position: GeodeticPosition, qibla: Qibla = Qibla(), from startUnixSeconds: Double,
                      durationSeconds: Double = 86_400) -> QiblaSunTimes? {
        guard Self.isValid(startUnixSeconds, durationSeconds) else { return nil }
        switch qibla.solve(from: position).greatCircleBearing {
        case .undefined(let reason):
            return QiblaSunTimes(events: [], absence: .qiblaUndefined(reason))
        case .degrees(let bearing):
            return times(at: position, qiblaBearingDegrees: bearing, from: startUnixSeconds, durationSeconds: durationSeconds)
        }
    }

    static func isValid(_ start: Double, _ duration: Double) -> Bool {
        duration > 0 && duration <= 7 * 86_400 && SolarPositionAlgorithm.validUnixSeconds.contains(start)
            && SolarPositionAlgorithm.validUnixSeconds.contains(start + duration)
    }

    /// The instants in [start, start + duration] for `position` and a given Qibla bearing (degrees
    /// from true north). ΔT from ``DeltaT`` unless given. nil as for ``times(at:qibla:from:durationSeconds:)``
    /// (with an explicit ΔT, only the duration is checked).
    public func times(at position: GeodeticPosition, qiblaBearingDegrees: Double, from startUnixSeconds: Double,
                      durationSeconds: Double = 86_400, deltaTSeconds: Double? = nil) -> QiblaSunTimes? {
        guard qiblaBearingDegrees.isFinite, startUnixSeconds.isFinite, durationSeconds > 0, durationSeconds <= 7 * 86_400,
              let deltaT = deltaTSeconds ?? (Self.isValid(startUnixSeconds, durationSeconds)
                  ? DeltaT.seconds(unixSeconds: startUnixSeconds + durationSeconds / 2) : nil)
        else { return nil }
        let end = startUnixSeconds + durationSeconds
        let day = SolarDay(from: startUnixSeconds, to: end, deltaTSeconds: deltaT)
        let observer = SolarPositionAlgorithm.Observer(position)
        let atmosphere = self.atmosphere
        func sun(_ t: Double) -> SolarPosition { day.position(at: t, observer: observer, atmosphere: atmosphere) }

        // Samples: every step, halved where the azimuth moves more than 45° in one.
        var times: [Double] = []
        var positions: [SolarPosition] = []
        let steps = max(1, Int((durationSeconds / scanStepSeconds).rounded(.up)))
        var previousTime = startUnixSeconds
        var previous = sun(previousTime)
        times.append(previousTime)
        positions.append(previous)
        func refine(_ t0: Double, _ p0: SolarPosition, _ t1: Double, _ p1: SolarPosition) {
            if abs(Angle.normalized180(p1.azimuthDegrees - p0.azimuthDegrees)) > 45, t1 - t0 > 1 {
                let tm = 0.5 * (t0 + t1)
                let pm = sun(tm)
                refine(t0, p0, tm, pm)
                refine(tm, pm, t1, p1)
            } else {
                times.append(t1)
                positions.append(p1)
            }
        }
        for i in 1...steps {
            let t = i == steps ? end : startUnixSeconds + Double(i) * scanStepSeconds
            let p = sun(t)
            refine(previousTime, previous, t, p)
            previousTime = t
            previous = p
        }

        var events: [QiblaSunEvent] = []
        for kind in QiblaSunKind.allCases {
            let target = kind.sunAzimuthDegrees(qiblaBearingDegrees: qiblaBearingDegrees)
            func g(_ p: SolarPosition) -> Double { Angle.normalized180(p.azimuthDegrees - target) }
            func gAt(_ t: Double) -> Double { g(sun(t)) }
            let values = positions.map(g)
            func crossing(_ i: Int, _ j: Int) -> Bool {
                (values[i] > 0) != (values[j] > 0) && abs(values[j] - values[i]) < 180
            }
            func addRoot(_ a: Double, _ fa: Double, _ b: Double, _ fb: Double) {
                let t = Brent.zero(gAt, a, b, fa: fa, fb: fb, tolerance: toleranceSeconds)
                let p = sun(t)
                if p.elevationDegrees >= minimumElevationDegrees {
                    events.append(QiblaSunEvent(unixSeconds: t, kind: kind, azimuthDegrees: p.azimuthDegrees,
                                                elevationDegrees: p.elevationDegrees))
                }
            }
            for i in 0..<(values.count - 1) where crossing(i, i + 1) {
                addRoot(times[i], values[i], times[i + 1], values[i + 1])
            }
            // Pairs of crossings inside one step: g turns back near zero between samples i−1 and i+1.
            if values.count >= 3 {
                for i in 1..<(values.count - 1) where !crossing(i - 1, i) && !crossing(i, i + 1) && abs(values[i]) < 10 {
                    let before = values[i] - values[i - 1], after = values[i + 1] - values[i]
                    guard abs(before) < 180, abs(after) < 180, (before > 0) != (after > 0) || before == 0 || after == 0 else { continue }
                    let sign = values[i] > 0 ? 1.0 : -1.0
                    // Minimise sign·g: the point where g comes closest to (or crosses) zero.
                    let (tm, gm) = Brent.minimum({ sign * gAt($0) }, times[i - 1], times[i + 1], tolerance: toleranceSeconds)
                    guard gm < 0 else { continue }
                    addRoot(times[i - 1], values[i - 1], tm, sign * gm)
                    addRoot(tm, sign * gm, times[i + 1], values[i + 1])
                }
            }
        }
        events.sort { $0.unixSeconds < $1.unixSeconds }
        if !events.isEmpty { return QiblaSunTimes(events: events, absence: nil) }
        let highest = positions.map(\.elevationDegrees).max() ?? -90
        return QiblaSunTimes(events: [], absence: highest < minimumElevationDegrees ? .sunTooLow : .noAlignment)
    }
}
