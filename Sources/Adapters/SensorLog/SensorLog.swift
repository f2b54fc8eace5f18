// SPDX-License-Identifier: Apache-2.0
// qiblad's sensor log (issue 36): a plain-text recording of a phone's accelerometer, gyroscope and
// magnetometer that any recording can be turned into, replayed through the daemon
// (`qibla-sim replay`) and written on a phone (`qiblad --record`). Text in, values out: no I/O.
import QiblaCore

/// A sensor log: `# key = value` header lines, then one sample a line, `TIME KIND X Y Z`.
///
/// - TIME: seconds, any monotonic origin, non-decreasing; the text is kept as written (replay
///   prints it back unchanged).
/// - KIND: `accel` (m/s², the reaction to gravity: about +9.81 on z for a phone lying screen up),
///   `gyro` (rad/s, right-handed), `magn` (µT as the sensor gives it, uncalibrated allowed).
/// - X Y Z: qiblad's device frame (x to the right edge, y to the top edge, z out of the screen),
///   mount matrices and scales applied.
///
/// Header keys read by qiblad: `latitude` and `longitude` (degrees, north and east positive;
/// required for a true heading and the expected field), `time` (ISO 8601 UTC, the recording's
/// start, for the magnetic model's date; default: now), `gyroscope_rate` (hertz, optionally
/// followed by `Hz`: the gyroscope chip's own output rate when the log's samples were read more
/// slowly than it outputs them — a polled chip set faster, or every n-th sample of a faster
/// stream; it bounds what one gyroscope sample stands for), and free-form ones (`device`,
/// `magnetometer`, `source`, …) kept as written. `#` lines after the first sample are comments.
public struct SensorLog: Sendable {
    /// What a sample measured.
    public enum Kind: String, Sendable, CaseIterable {
        case accel, gyro, magn
    }

    /// One line of samples.
    public struct Sample: Sendable, Equatable {
        public var timeSeconds: Double
        public var kind: Kind
        /// Device frame: m/s² (`accel`), rad/s (`gyro`), µT (`magn`).
        public var vector: Vector3

        public init(timeSeconds: Double, kind: Kind, vector: Vector3) {
            self.timeSeconds = timeSeconds
            self.kind = kind
            self.vector = vector
        }
    }

    /// Samples that share one TIME: the sensors sampled together.
    public struct Instant: Sendable, Equatable {
        public var timeSeconds: Double
        /// TIME as the log wrote it.
        public var timeText: String
        public var acceleration: Vector3?
        public var angularVelocity: Vector3?
        public var magneticField: Vector3?
    }

    /// Header entries in the order written.
    public var header: [(key: String, value: String)]
    /// The samples grouped by TIME, in order.
    public var instants: [Instant]

    public init(header: [(key: String, value: String)] = [], instants: [Instant] = []) {
        self.header = header
        self.instants = instants
    }

    /// The last value of header `key`, nil when absent.
    public func headerValue(_ key: String) -> String? { header.last { $0.key == key }?.value }

    /// Whether any instant carries a gyroscope sample.
    public var hasGyroscope: Bool { instants.contains { $0.angularVelocity != nil } }

    /// The position from `latitude` and `longitude` (as every command line reads coordinates:
    /// `-33.9`, `33.9S`), nil when neither is given.
    /// - Throws: ``SensorLogError`` when only one is given or either is not a coordinate.
    public func position() throws(SensorLogError) -> GeodeticPosition? {
        let latitude = headerValue("latitude"), longitude = headerValue("longitude")
        if latitude == nil, longitude == nil { return nil }
        guard let latitude, let longitude else {
            throw SensorLogError(line: nil, message: "the header gives \(latitude == nil ? "longitude" : "latitude") without \(latitude == nil ? "latitude" : "longitude")")
        }
        switch CoordinateWords.position(latitude: latitude, longitude: longitude) {
        case .success(var position):
            if let height = headerValue("height"), let metres = parseFiniteDouble(height) { position.heightMetres = metres }
            return position
        case .failure(let problem): throw SensorLogError(line: nil, message: "header: \(problem.message)")
        }
    }

    /// The `time` header as seconds since the Unix epoch, nil when absent.
    /// - Throws: ``SensorLogError`` when it is not ISO 8601.
    public func startUnixSeconds() throws(SensorLogError) -> Double? {
        guard let text = headerValue("time") else { return nil }
        guard let seconds = Self.unixSeconds(iso8601: text) else {
            throw SensorLogError(line: nil, message: "header: time \"\(text)\" is not ISO 8601 (2025-06-01T12:00:00Z)")
        }
        return seconds
    }

    /// The `gyroscope_rate` header, hertz, nil when absent.
    /// - Throws: ``SensorLogError`` when it is not a positive finite number (optionally followed by `Hz`).
    public func gyroscopeOutputHertz() throws(SensorLogError) -> Double? {
        guard let text = headerValue("gyroscope_rate") else { return nil }
        var number = Substring(text)
        if number.lowercased().hasSuffix("hz") { number = number.dropLast(2) }
        while number.last == " " || number.last == "\t" { number = number.dropLast() }
        guard let hertz = parseFiniteDouble(String(number)), hertz > 0 else {
            throw SensorLogError(line: nil, message: "header: gyroscope_rate \"\(text)\" is not a positive rate in hertz (285.7 or 285.7 Hz)")
        }
        return hertz
    }

    // MARK: Parsing

    /// Parses a whole log.
    /// - Throws: ``SensorLogError`` with the line number of the first bad line (an unknown kind,
    ///   a missing or non-finite number, time running backwards, a malformed header line).
    public static func parse(_ text: String) throws(SensorLogError) -> SensorLog {
        var log = SensorLog()
        var lineNumber = 0
        var current: Instant?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed == "\r" { continue }
            if trimmed.first == "#" {
                // Header lines before the first sample; comments everywhere.
                guard current == nil, log.instants.isEmpty else { continue }
                let body = trimmed.dropFirst()
                guard let equals = body.firstIndex(of: "=") else { continue }
                let key = body[..<equals].trimmingSpaces
                let value = body[body.index(after: equals)...].trimmingSpaces
                guard !key.isEmpty, !key.contains(" ") else {
                    throw SensorLogError(line: lineNumber, message: "a header line is `# key = value`")
                }
                log.header.append((String(key), String(value)))
                continue
            }
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard words.count == 5 else {
                throw SensorLogError(line: lineNumber, message: "expected `TIME KIND X Y Z`, found \(words.count) fields")
            }
            guard let time = parseFiniteDouble(words[0]) else {
                throw SensorLogError(line: lineNumber, message: "TIME \"\(words[0])\" is not a finite number of seconds")
            }
            guard let kind = Kind(rawValue: String(words[1])) else {
                throw SensorLogError(line: lineNumber, message: "KIND \"\(words[1])\" is not accel, gyro or magn")
            }
            guard let x = parseFiniteDouble(words[2]), let y = parseFiniteDouble(words[3]), let z = parseFiniteDouble(words[4]) else {
                throw SensorLogError(line: lineNumber, message: "X Y Z must be finite numbers")
            }
            let vector = Vector3(x, y, z)
            if var instant = current, instant.timeSeconds == time {
                guard instant.set(kind, vector) else {
                    throw SensorLogError(line: lineNumber, message: "a second \(kind.rawValue) sample at time \(words[0])")
                }
                current = instant
                continue
            }
            if let instant = current {
                guard time > instant.timeSeconds else {
                    throw SensorLogError(line: lineNumber, message: "time runs backwards (\(words[0]) after \(instant.timeText))")
                }
                log.instants.append(instant)
            }
            var instant = Instant(timeSeconds: time, timeText: String(words[0]))
            _ = instant.set(kind, vector)
            current = instant
        }
        if let instant = current { log.instants.append(instant) }
        return log
    }

    // MARK: Writing

    /// A header line, `# key = value`.
    public static func headerLine(key: String, value: String) -> String { "# \(key) = \(value)" }

    /// A sample line, `TIME KIND X Y Z`, with TIME in microseconds' precision and the values to
    /// six significant decimals (finer than any phone sensor's resolution).
    public static func sampleLine(timeSeconds: Double, kind: Kind, _ v: Vector3) -> String {
        "\(decimal(timeSeconds, places: 6)) \(kind.rawValue) \(decimal(v.x, places: 6)) \(decimal(v.y, places: 6)) \(decimal(v.z, places: 6))"
    }

    /// Fixed-point text with `places` decimals ("-0.000123"), without Foundation.
    public static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "nan" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return "\(value)" }
        let whole = UInt64(scaled)
        let divisor = UInt64(scale)
        var fraction = String(whole % divisor)
        while fraction.count < places { fraction = "0" + fraction }
        let sign = value < 0 && whole != 0 ? "-" : ""
        return places == 0 ? "\(sign)\(whole)" : "\(sign)\(whole / divisor).\(fraction)"
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]` (a date alone is midnight UTC) → Unix seconds.
    public static func unixSeconds(iso8601 text: String) -> Double? {
        let chars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= chars.count else { return nil }
            var value = 0
            for c in chars[range] {
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard chars.count >= 10, chars[4] == 45, chars[7] == 45,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        var seconds = 0.0
        var index = 10
        if chars.count > 10 {
            guard chars[10] == 84 || chars[10] == 32, chars.count >= 19, chars[13] == 58, chars[16] == 58,
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                  hour < 24, minute < 60, second < 61 else { return nil }
            seconds = Double(hour * 3600 + minute * 60 + min(second, 59))
            index = 19
            if index < chars.count, chars[index] == 46 {
                var scale = 0.1
                index += 1
                while index < chars.count, chars[index] >= 48, chars[index] <= 57 {
                    seconds += Double(chars[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
            }
            if index < chars.count {
                if chars[index] == 90, index == chars.count - 1 {
                    index += 1
                } else if chars[index] == 43 || chars[index] == 45, chars.count == index + 6, chars[index + 3] == 58,
                          let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6) {
                    let offset = Double(hours * 3600 + minutes * 60)
                    seconds -= chars[index] == 43 ? offset : -offset
                    index = chars.count
                } else {
                    return nil
                }
            }
        }
        guard let midnight = DecimalYear.unixSeconds(year: year, month: month, day: day) else { return nil }
        return midnight + seconds
    }
}

extension SensorLog.Instant {
    public init(timeSeconds: Double, timeText: String) {
        self.timeSeconds = timeSeconds
        self.timeText = timeText
    }

    /// Sets the sample of `kind`; false when the instant has one already.
    mutating func set(_ kind: SensorLog.Kind, _ vector: Vector3) -> Bool {
        switch kind {
        case .accel:
            guard acceleration == nil else { return false }
            acceleration = vector
        case .gyro:
            guard angularVelocity == nil else { return false }
            angularVelocity = vector
        case .magn:
            guard magneticField == nil else { return false }
            magneticField = vector
        }
        return true
    }
}

/// A log that cannot be read, with the line at fault (1-based; nil for the header as a whole).
public struct SensorLogError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int?
    public var message: String

    public init(line: Int?, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" { s = s.dropLast() }
        return s
    }
}
