// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface
import Testing
@testable import QiblaDaemon

/// Which transition writes which journal line: facts once a run and on change, rate limits, one
/// line per compass transition.
@Suite struct DaemonLogTests {
    @Test func aFactIsWrittenOnceARunAndAgainOnlyWhenItChanges() {
        var log = DaemonLog()
        typealias Step = (topic: DaemonLog.Topic, text: String, level: LogLine.Level, why: String)
        let steps: [Step] = [
            (.compass, "no compass: none found", .info, "first time"),
            (.compass, "no compass: none found", .debug, "the next claim finds the same"),
            (.geoclue, "no compass: none found", .info, "another topic keeps its own line"),
            (.compass, "compass: magnetometer a, accelerometer b", .info, "a change"),
            (.compass, "no compass: none found", .info, "back again is a change too"),
            (.compass, "no compass: none found", .debug, "and then a repeat"),
        ]
        for step in steps {
            #expect(log.fact(step.topic, step.text) == LogLine(step.level, step.text), "\(step.why)")
        }
    }

    @Test func aWarningFactKeepsItsLevelOnlyTheFirstTime() {
        var log = DaemonLog()
        #expect(log.sensorsFound(magnetometer: "ak09911", accelerometer: nil).level == .warning)
        #expect(log.sensorsFound(magnetometer: "ak09911", accelerometer: nil).level == .debug)
        let both = log.sensorsFound(magnetometer: "ak09911", accelerometer: "bma255")
        #expect(both == LogLine(.info, "compass: magnetometer ak09911, accelerometer bma255"))
        #expect(log.noCompass("no IIO magnetometer") == LogLine(.info, "no compass: no IIO magnetometer"))
    }

    /// Issue 33: "cannot connect to gpsd" was written at every claim while gpsd was absent.
    @Test func gpsdUnreachableIsAWarningOncePerRunAndOnChange() {
        var log = DaemonLog()
        typealias Step = (event: String, level: LogLine.Level?, why: String)
        let steps: [Step] = [
            ("refused", .warning, "the first failure of the run"),
            ("refused", .debug, "the retries"),
            ("refused", .debug, "the next claim's first attempt: same fact, not news"),
            ("timed out", .warning, "another reason is a change"),
            ("connected", nil, "gpsd answered"),
            ("timed out", .warning, "failing again after a connection is a change"),
        ]
        for step in steps {
            if step.event == "connected" { log.gpsdConnected(); continue }
            let line = log.gpsdUnreachable(reason: step.event)
            #expect(line.level == step.level, "\(step.why): \(line)")
            if line.level == .warning {
                #expect(line.text == "cannot connect to gpsd: \(step.event); asking again when its socket appears or after a while")
            }
        }
    }

    @Test func onceARunIgnoresTheWording() {
        var log = DaemonLog()
        #expect(log.once(.geoclueRefusal, "refused: a", level: .warning).level == .warning)
        #expect(log.once(.geoclueRefusal, "refused: b", level: .warning).level == .debug)
    }

    @Test func rejectedValuesWarnAfterThirtyQuietSeconds() {
        var log = DaemonLog()
        let levels = [(0.0, 1), (10.0, 2), (39.0, 3), (70.0, 4), (100.5, 5)].map { log.droppedValues(count: $0.1, nowSeconds: $0.0).level }
        // 0: first; 10 and 39: within 30 s of the previous; 70: 31 s after 39; 100.5: 30.5 s after 70.
        #expect(levels == [.warning, .debug, .debug, .warning, .warning])
    }

    @Test func theLiveSourceLineNamesTheNewAndTheOldSource() {
        var location = LocationModel()
        let fix = Location(position: GeodeticPosition(uncheckedLatitude: 51.5, longitude: -0.12), horizontalAccuracyMetres: 4.6,
                           timestampUnixSeconds: newYear2026)
        #expect(DaemonLog.liveSourceChange(from: nil, to: location) == nil, "nothing changed")
        location.apply(.liveFix(fix, from: .gpsd))
        let line = DaemonLog.liveSourceChange(from: nil, to: location)
        #expect(line?.text.hasPrefix("live fix from gpsd, ±5 m: ") == true, "\(String(describing: line))")
        #expect(DaemonLog.liveSourceChange(from: .geoclue, to: location)?.text.contains("(was geoclue)") == true)
        location.apply(.liveFixLost)
        #expect(DaemonLog.liveSourceChange(from: .gpsd, to: location)
            == LogLine(.info, "live fix lost; falling back to the last known location"))
    }

    @Test func claimLinesSayWhatHappensToTheSources() {
        #expect(DaemonLog.firstClaim(by: ":1.5", alreadyRunning: false).text == "first compass claim (:1.5); starting sensors and position source")
        #expect(DaemonLog.firstClaim(by: ":1.5", alreadyRunning: true).text.hasSuffix("already running (always-on)"))
        #expect(DaemonLog.lastRelease(by: ":1.5", keepRunning: false).text.hasSuffix("stopping sensors and position source"))
        #expect(DaemonLog.lastRelease(by: ":1.5", keepRunning: true).text.hasSuffix("keep running (always-on)"))
    }

    @Test func compassTransitionsWriteOneLineEach() {
        let model = CompassModel()   // collecting, no interference
        typealias Row = (change: (inout CompassState) -> Void, lines: [LogLine], why: String)
        let rows: [Row] = [
            ({ _ in }, [], "nothing changed"),
            ({ $0.magneticInterference = true }, [LogLine(.info, "magnetic interference over")], "interference ends"),
            ({ $0.calibrationState = .calibrated },
             [LogLine(.warning, "the calibration no longer matches live data (another sensor, or a magnet nearby); learning it again")],
             "an accepted calibration lost"),
            ({ $0.calibrationState = .unvalidated },
             [LogLine(.warning, "the calibration no longer matches live data (another sensor, or a magnet nearby); learning it again")],
             "a restored calibration contradicted"),
            ({ $0.calibrationState = .calibrated; $0.magneticInterference = true }, [
                LogLine(.warning, "the calibration no longer matches live data (another sensor, or a magnet nearby); learning it again"),
                LogLine(.info, "magnetic interference over"),
            ], "two transitions, two lines, in order"),
        ]
        for row in rows {
            var log = DaemonLog()
            var before = model.state
            row.change(&before)
            #expect(log.compassChanges(from: before, to: model, nowSeconds: 0) == row.lines, "\(row.why)")
        }
        #expect(DaemonLog.rounded(.nan) == "-" && DaemonLog.rounded(1.26) == "1.3")
    }
}

/// The sun's calculators as the daemon answers them.
@Suite struct SunRequestTests {
    let london = GeodeticPosition(uncheckedLatitude: 51.5074, longitude: -0.1278)

    @Test func outOfRangeTimesAreRefusedWithASentence() {
        let model = DaemonModel()
        #expect(model.sunPosition(at: london, unixSeconds: -3e9) == .failure(.timeOutOfRange))
        #expect(model.qiblaSunTimes(at: london, from: 5_680_281_600 - 3_600, nowUnixSeconds: newYear2026) == .failure(.windowOutOfRange))
        #expect(DaemonModel.SunRequestRefusal.windowOutOfRange.description.contains("1900 to 2149"))
    }

    @Test func theAnswersComeFromTheConfiguredKaaba() throws {
        var configuration = DaemonModel.Configuration()
        let model = DaemonModel(configuration: configuration)
        let sun = try model.sunPosition(at: london, unixSeconds: newYear2026 + 43_200).get()
        #expect(sun.elevationDegrees > 10 && sun.elevationDegrees < 20, "London's noon sun on 1 January: \(sun)")
        // 1 January: London's winter sun never reaches the Qibla's azimuth (119°) 5° high; in June it does.
        #expect(try model.qiblaSunTimes(at: london, from: newYear2026, nowUnixSeconds: newYear2026).get() == [])
        let june = newYear2026 + 171 * 86_400
        let times = try model.qiblaSunTimes(at: london, from: june, nowUnixSeconds: june).get()
        #expect(times.map(\.kind) == [.sun, .shadow], "\(times)")
        #expect(model.kaabaSunPassages(year: 2026) == KaabaSunPassages.passages(year: 2026))
        #expect(!model.kaabaSunPassages(year: 2026).isEmpty)
        #expect(model.kaabaSunPassages(year: 1800).isEmpty)
        // At the Kaaba itself the Qibla is undefined: no instants, and no error.
        configuration.qibla.kaaba = london
        #expect(try DaemonModel(configuration: configuration).qiblaSunTimes(at: london, from: newYear2026, nowUnixSeconds: newYear2026).get() == [])
    }
}
