// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaCore
import QiblaDBus
import QiblaEventLoop
import QiblaInterface
import QiblaPlatform

/// `qiblactl sun`: the sun as a second compass (issue 15). The sun's position, the day's
/// Qibla-sun instants and the next Kaaba passage are computed here with QiblaCore (for the place
/// given, or qiblad's current location); `--check` asks qiblad to compare its needle with the sun.
struct Sun: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("The sun now, today's Qibla-sun times, the next Kaaba passage; --check tests the compass against the sun."),
            discussion: paragraphs(
                tr("Twice a year the sun stands over the Kaaba, and on most days, at most places, there is a moment when the sun's azimuth equals the Qibla bearing (face the sun) or its opposite (the shadow of a vertical stick points to the Qibla). Times are in local time; only moments with the sun at least 5 degrees high count. Without LATITUDE LONGITUDE the place is qiblad's current location."),
                tr("--check claims the compass and asks qiblad to compare the phone's heading with the sun: point the top edge of the phone at the sun (or, with --alignment shadow and the phone flat, along the shadow of a vertical object), hold it still, and the error is printed. --store keeps it as a correction (undone by qiblactl calibrate --reset)."),
                tr("--json prints one object: latitude, longitude, date, sun_azimuth_deg, sun_elevation_deg, qibla_bearing_deg, times (an array of objects: time (ISO 8601, local), unix_us, kind, elevation_deg, instruction), none_reason (null, at-kaaba, antipodal, sun-too-low, no-alignment), next_kaaba_passage (time, unix_us, kind); with --check: check_error_deg. Exit status: 0; 1 no daemon (when needed) or the check was refused; 2 invalid input."))) }

    @OptionGroup var bus: BusOptions
    @Option(name: .long, help: ArgumentHelp(tr("The local day for the Qibla-sun times, YYYY-MM-DD (default: today)."))) var date: String?
    @Flag(name: .long, help: ArgumentHelp(tr("Print one JSON object."))) var json = false
    @Flag(name: .long, help: ArgumentHelp(tr("Check the compass against the sun (needs qiblad and a compass)."))) var check = false
    @Option(name: .long, help: ArgumentHelp(tr("With --check: sun (point the top edge at the sun) or shadow (phone flat, along a shadow).")))
    var alignment = "sun"
    @Flag(name: .long, help: ArgumentHelp(tr("With --check: keep the error as the heading correction."))) var store = false
    @Option(name: .long, help: ArgumentHelp(tr("With --check: seconds to hold still before measuring (0–60)."))) var settle: Double = 5
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(tr("LATITUDE LONGITUDE in degrees (default: qiblad's location).")))
    var coordinates: [String] = []

    func validate() throws {
        guard ["sun", "shadow"].contains(alignment) else { throw ValidationError("--alignment takes sun or shadow") }
        guard settle.isFinite, (0...60).contains(settle) else { throw ValidationError("--settle takes seconds from 0 to 60") }
        if !coordinates.isEmpty && check { throw ValidationError("--check uses qiblad's location: give no coordinates") }
    }

    func run() throws {
        let now = WallClock.nowUnixSeconds()
        let position = try place()
        let dayStart: Double
        if let date {
            guard let start = Self.localMidnight(date) else { throw fail("--date takes YYYY-MM-DD (got '\(date)')") }
            dayStart = start
        } else {
            dayStart = Self.localMidnight(unixSeconds: now)
        }
        let dayEnd = Self.localMidnight(unixSeconds: dayStart + 36 * 3600)  // the next local midnight, DST included
        guard let sunNow = SolarPositionAlgorithm.position(at: now, for: position),
              let times = QiblaSunSearch().times(at: position, from: dayStart, durationSeconds: dayEnd - dayStart) else {
            throw fail("the date is outside the solar model's years (1900 to 2149)")
        }
        let bearing = Qibla().solve(from: position).greatCircleBearing.value
        let reference = date == nil ? now : dayStart
        let year = Int(DecimalYear.from(unixSeconds: reference).rounded(.down))
        let passage = ((KaabaSunPassages.passages(year: year) ?? []) + (KaabaSunPassages.passages(year: year + 1) ?? []))
            .first { $0.unixSeconds > reference }
        let checkError = check ? try checkWithSun() : nil

        if json {
            var o = JSONObject()
            o.set("latitude", position.latitudeDegrees)
            o.set("longitude", position.longitudeDegrees)
            o.set("date", Self.localText(dayStart, withTime: false))
            o.set("sun_azimuth_deg", sunNow.azimuthDegrees)
            o.set("sun_elevation_deg", sunNow.elevationDegrees)
            o.set("qibla_bearing_deg", bearing)
            o.set("times", times.events.map { event in
                var e = JSONObject()
                e.set("time", Self.localText(event.unixSeconds, withTime: true))
                e.set("unix_us", UInt64(event.unixSeconds * 1e6))
                e.set("kind", event.kind.rawValue)
                e.set("elevation_deg", event.elevationDegrees)
                e.set("instruction", Self.instruction(event.kind))
                return e
            })
            o.set("none_reason", times.absence.map(Self.reasonKey))
            o.set("next_kaaba_passage", passage.map { p in
                var e = JSONObject()
                e.set("time", Self.localText(p.unixSeconds, withTime: true))
                e.set("unix_us", UInt64(p.unixSeconds * 1e6))
                e.set("kind", p.kind.rawValue)
                return e
            })
            if check { o.set("check_error_deg", checkError) }
            printLine(o.text)
            return
        }
        printLine("Sun now: azimuth \(fixedBearing(sunNow.azimuthDegrees, 1))° \(CompassPoint.name(forBearing: sunNow.azimuthDegrees)), "
            + "elevation \(fixed(sunNow.elevationDegrees, 1))° (at \(fixed(position.latitudeDegrees, 4)), \(fixed(position.longitudeDegrees, 4)))")
        if let bearing { printLine("Qibla \(fixedBearing(bearing, 2))° \(CompassPoint.name(forBearing: bearing))") }
        printLine("Qibla-sun times on \(Self.localText(dayStart, withTime: false)) (local time):")
        if let absence = times.absence { printLine("  none: \(Self.reasonText(absence))") }
        for event in times.events {
            let time = Self.localText(event.unixSeconds, withTime: true).split(separator: "T").last.map { String($0.prefix(5)) } ?? ""
            printLine("  \(time)  \(event.kind.rawValue.padding(6))  elevation \(fixed(event.elevationDegrees, 1))°  \(Self.instruction(event.kind))")
        }
        if let passage {
            let what = passage.kind == .zenith ? "the sun over the Kaaba: every shadow points away from the Qibla"
                                               : "the sun under the Kaaba: wherever it is up, shadows point to the Qibla"
            printLine("Next Kaaba passage: \(Self.localText(passage.unixSeconds, withTime: true).replacingFirst("T", with: " ").prefix(16)) local, \(passage.kind.rawValue) (\(what))")
        }
        if let checkError {
            printLine("Compass error against the sun: \(checkError >= 0 ? "+" : "")\(fixed(checkError, 1))° (measured − true)\(store ? "; stored as the heading correction" : "")")
        }
    }

    /// The place: the coordinates given, or qiblad's current location.
    func place() throws -> GeodeticPosition {
        if !coordinates.isEmpty {
            return try parsePosition(coordinates)
        }
        let properties = try QibladClient.properties(try bus.connect())
        guard let lat = properties[QiblaProperty.latitude.rawValue]?.double, let lon = properties[QiblaProperty.longitude.rawValue]?.double,
              let position = try? GeodeticPosition(latitudeDegrees: lat, longitudeDegrees: lon) else {
            throw fail("qiblad knows no location: give LATITUDE LONGITUDE, or qiblactl set-location LAT LON", status: .failure)
        }
        return position
    }

    /// Claims the compass, lets the user align and hold still, asks qiblad for the error.
    func checkWithSun() throws -> Double {
        let connection = try bus.connect()
        _ = try QibladClient.call(connection, QiblaMethod.claimCompass.rawValue)
        defer { _ = try? QibladClient.call(connection, QiblaMethod.releaseCompass.rawValue) }
        if !json {
            printLine(alignment == "sun"
                ? "Point the top edge of the phone at the sun (hold it up, the sun straight ahead, not looking into it) and hold still…"
                : "Lay the phone flat with its top edge along the shadow of a vertical object, pointing away from the object, and hold still…")
        }
        // Keep the connection serviced while the sensors start and the smoothing window fills.
        let loop = try EventLoop()
        connection.attach(to: loop)
        _ = loop.schedule(after: .seconds(settle)) { loop.stop() }
        try loop.run()
        let message = DBusMessage.methodCall(destination: QibladClient.name, path: QibladClient.path,
                                             interface: QibladClient.interface, member: QiblaMethod.checkHeadingWithSun.rawValue)
        let reply: [DBusValue]
        do {
            try message.append(.string(alignment), .bool(store))
            reply = try connection.call(message, timeoutMilliseconds: 5000).arguments()
        } catch {
            throw fail("the sun check was refused: \(error.message)", status: .failure)
        }
        guard let error = reply.first?.double else { throw fail("CheckHeadingWithSun gave no error value", status: .failure) }
        return error
    }

    static func instruction(_ kind: QiblaSunKind) -> String {
        kind == .sun ? "face the sun: it stands in the Qibla" : "the shadow of a vertical stick points to the Qibla"
    }

    static func reasonKey(_ absence: QiblaSunAbsence) -> String {
        switch absence {
        case .qiblaUndefined(.atKaaba): "at-kaaba"
        case .qiblaUndefined(.antipodal): "antipodal"
        case .sunTooLow: "sun-too-low"
        case .noAlignment: "no-alignment"
        }
    }

    static func reasonText(_ absence: QiblaSunAbsence) -> String {
        switch absence {
        case .qiblaUndefined(.atKaaba): "you are at the Kaaba"
        case .qiblaUndefined(.antipodal): "opposite the Kaaba every direction leads to it"
        case .sunTooLow: "the sun does not rise 5° above the horizon that day"
        case .noAlignment: "the sun's path does not cross the Qibla direction (or its opposite) while it is high enough"
        }
    }

    // MARK: Local time (the C library's time zone: TZ or /etc/localtime)

    /// Local midnight of a YYYY-MM-DD date, seconds since the epoch.
    static func localMidnight(_ text: String) -> Double? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              DecimalYear.from(year: y, month: m, day: d) != nil else { return nil }
        return LocalTime.unixSeconds(year: y, month: m, day: d)
    }

    /// Local midnight of the local day containing `unixSeconds`.
    static func localMidnight(unixSeconds: Double) -> Double {
        let c = LocalTime.components(unixSeconds: unixSeconds)
        return LocalTime.unixSeconds(year: c.year, month: c.month, day: c.day) ?? unixSeconds
    }

    /// ISO 8601 local text: `2026-06-21` or `2026-06-21T07:42:10+01:00`.
    static func localText(_ unixSeconds: Double, withTime: Bool) -> String {
        let t = LocalTime.components(unixSeconds: unixSeconds.rounded())
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let day = "\(t.year)-\(two(t.month))-\(two(t.day))"
        guard withTime else { return day }
        let offset = t.utcOffsetSeconds / 60
        let zone = (offset < 0 ? "-" : "+") + two(abs(offset) / 60) + ":" + two(abs(offset) % 60)
        return day + "T" + two(t.hour) + ":" + two(t.minute) + ":" + two(t.second) + zone
    }
}

private extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func replacingFirst(_ target: Character, with replacement: String) -> String {
        guard let i = firstIndex(of: target) else { return self }
        return String(self[..<i]) + replacement + String(self[index(after: i)...])
    }
}
