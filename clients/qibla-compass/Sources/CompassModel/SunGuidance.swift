// SPDX-License-Identifier: Apache-2.0

/// The sun as the compass when there is none: the next Qibla-sun instant (from `QiblaSunTimes`,
/// or the `NextQiblaSunTime`/`NextQiblaSunKind` properties) and the next Kaaba passage (from
/// `KaabaSunPassages`), in words. Times are formatted by the caller (local time is the
/// platform's).
public enum SunGuidance {
    /// One instant of `QiblaSunTimes`: microseconds since the Unix epoch, `sun` or `shadow`.
    public struct QiblaSunTime: Sendable, Equatable {
        public var timeMicroseconds: UInt64
        public var kind: String
        public var elevationDegrees: Double
        public init(timeMicroseconds: UInt64, kind: String, elevationDegrees: Double) {
            self.timeMicroseconds = timeMicroseconds
            self.kind = kind
            self.elevationDegrees = elevationDegrees
        }
    }

    /// "Face the sun at 14:32" or "Your shadow points to the Qibla at 16:05", for every instant
    /// still to come (at most `limit`), in time order.
    public static func instructions(_ times: [QiblaSunTime], nowMicroseconds: UInt64, limit: Int = 3,
                                    clock: (UInt64) -> String) -> [String] {
        times.filter { $0.timeMicroseconds > nowMicroseconds }
            .sorted { $0.timeMicroseconds < $1.timeMicroseconds }
            .prefix(limit)
            .map { instruction(kind: $0.kind, time: clock($0.timeMicroseconds)) }
    }

    /// One instant in words.
    public static func instruction(kind: String, time: String) -> String {
        kind == "shadow"
            ? fill(tr("Your shadow points to the Qibla at {time}"), ["time": time])
            : fill(tr("Face the sun at {time}: it stands in the Qibla"), ["time": time])
    }

    /// The next passage over the Kaaba (zenith: face the sun, wherever it is up) or under it
    /// (nadir: the sun opposite the Kaaba, so wherever it is up every shadow points to the Qibla).
    public static func passage(kind: String, date: String) -> String {
        kind == "zenith"
            ? fill(tr("On {date} the sun stands over the Kaaba: wherever it is up, face it to face the Qibla."), ["date": date])
            : fill(tr("On {date} the sun stands opposite the Kaaba: wherever it is up, your shadow points to the Qibla."), ["date": date])
    }
}
