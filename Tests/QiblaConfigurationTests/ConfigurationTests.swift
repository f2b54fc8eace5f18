// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import Testing
import QiblaConfiguration
import QiblaDaemon
import QiblaGPSD
import QiblaIIO
import QiblaState

@Suite struct ConfigurationTests {
    @Test func anEmptyFileIsTheDefaultConfiguration() throws {
        let (config, warnings) = try DaemonConfiguration.parse("")
        #expect(config == DaemonConfiguration())
        #expect(warnings.isEmpty)
        #expect(config.model.qibla.bearingModel == .greatCircle)
        #expect(config.publishing.maxSignalRateHertz == 10)
        #expect(config.model.compass.smoothingWindowSeconds == 0.5)
        #expect(config.gpsd?.host == "localhost" && config.gpsd?.port == 2947 && config.gpsd != nil)
        #expect(config.model.qibla.kaaba == Qibla.defaultKaaba)
    }

    @Test func theShippedExampleFileParsesToTheDefaults() throws {
        let text = try #require(try? readTextFile(repositoryRootPath() + "/systemd/qiblad.conf").get())
        let (config, warnings) = try DaemonConfiguration.parse(text)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(config == DaemonConfiguration())
    }

    @Test func everyKeyIsRead() throws {
        let (config, warnings) = try DaemonConfiguration.parse("""
            # comment
            [qiblad]
            bearing-model = geodesic
            kaaba = 21.4225, 39.8262
            max-signal-rate = 5
            smoothing-window = 1.5
            gpsd = 192.168.1.2:3000
            fix-timeout = 20
            gpsd-socket-directory = /var/run/gps
            sensor-mode = buffered
            sample-rate = 50
            magnetometer = lis3mdl
            accelerometer = mpu6050
            magnetometer-mount-matrix = 0, 1, 0; 1, 0, 0; 0, 0, -1
            accelerometer-mount-matrix = -1, 0, 0; 0, 1, 0; 0, 0, 1
            future-key = whatever
            """)
        #expect(config.model.qibla.bearingModel == .geodesic)
        #expect(config.model.qibla.kaaba.latitudeDegrees == 21.4225)
        #expect(config.publishing.maxSignalRateHertz == 5)
        #expect(config.model.compass.smoothingWindowSeconds == 1.5)
        #expect(config.gpsd?.host == "192.168.1.2" && config.gpsd?.port == 3000)
        #expect(config.gpsd?.fixTimeoutSeconds == 20)
        #expect(config.gpsd?.controlSocketDirectory == "/var/run/gps")
        #expect(config.sensors.mode == .buffered)
        #expect(config.sensors.sampleRateHertz == 50)
        #expect(config.sensors.preferredMagnetometerName == "lis3mdl" && config.sensors.preferredAccelerometerName == "mpu6050")
        #expect(config.sensors.magnetometerMountMatrixOverride == Matrix3(0, 1, 0, 1, 0, 0, 0, 0, -1))
        #expect(config.sensors.accelerometerMountMatrixOverride?.determinant == -1)
        #expect(warnings.count == 1 && warnings[0].contains("future-key"), "unknown keys warn, not fail")
    }

    @Test(arguments: [
        ("bearing-model = rhumb", 1, "bearing-model"),
        ("\n\nmax-signal-rate = fast", 3, "max-signal-rate"),
        ("max-signal-rate = 0", 1, "max-signal-rate"),
        ("smoothing-window = nan", 1, "smoothing-window"),
        ("sample-rate = 1,5", 1, "sample-rate"),
        ("kaaba = 91, 0", 1, "kaaba"),
        ("kaaba = 21.4", 1, "kaaba"),
        ("gpsd = host:99999", 1, "gpsd"),
        ("gpsd-socket-directory = run", 1, "gpsd-socket-directory"),
        ("location-source = modem", 1, "location-source"),
        ("sensor-mode = dma", 1, "sensor-mode"),
        ("magnetometer-mount-matrix = 0, 0, 0; 0, 1, 0; 0, 0, 1", 1, "magnetometer-mount-matrix"),
        ("accelerometer-mount-matrix = 1, 0; 0, 1", 1, "accelerometer-mount-matrix"),
    ])
    func aBadValueNamesTheLineAndTheKey(text: String, line: Int, key: String) {
        #expect {
            _ = try DaemonConfiguration.parse(text)
        } throws: { error in
            guard let e = error as? ConfigurationError else { return false }
            return e.line == line && e.key == key && e.description.contains("line \(line)")
        }
    }

    @Test func theInterferenceTolerancesAreConfigurable() throws {
        let (config, warnings) = try DaemonConfiguration.parse("""
            interference-field-tolerance = 0.25
            interference-dip-tolerance = 12
            interference-enter = 0.2
            interference-recover = 3
            """)
        #expect(warnings.isEmpty)
        let interference = config.model.compass.calibrator.interference
        #expect(interference.fieldToleranceFraction == 0.25 && interference.inclinationToleranceDegrees == 12)
        #expect(interference.enterSeconds == 0.2 && interference.recoverSeconds == 3)
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("interference-dip-tolerance = 0") }
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("interference-field-tolerance = nan") }
    }

    @Test func aLineWithoutEqualsIsAnError() {
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("bearing-model geodesic") }
    }

    @Test func gpsdEndpoints() {
        #expect(parseHostPort("localhost:2947")! == ("localhost", 2947))
        #expect(parseHostPort("gps.local")! == ("gps.local", 2947))
        #expect(parseHostPort("[::1]:3000")! == ("::1", 3000))
        #expect(parseHostPort("[::1]")! == ("::1", 2947))
        #expect(parseHostPort("") == nil)
        #expect(parseHostPort(":2947") == nil)
        #expect(parseHostPort("a:b:c") == nil)
        #expect(parseHostPort("host:0") == nil)
        #expect((try? DaemonConfiguration.parse("gpsd = none"))?.0.gpsd == nil)
    }

    /// The rest's read period is how long a phone can move unseen before it wakes, and the
    /// attitude filter widens the attitude it keeps across a rest by what that interval may hide.
    @Test func theRestSampleRateReachesTheAttitudeFilter() throws {
        #expect(DaemonConfiguration().model.compass.attitudeFilter.restReadIntervalSeconds == 1 / 2.0)
        let (slow, _) = try DaemonConfiguration.parse("rest-sample-rate = 1.5")
        #expect(slow.sensors.restSampleRateHertz == 1.5)
        #expect(abs(slow.model.compass.attitudeFilter.restReadIntervalSeconds - 1 / 1.5) < 1e-12)
        let (off, _) = try DaemonConfiguration.parse("rest-sample-rate = off")
        #expect(off.sensors.restSampleRateHertz == nil)
        #expect(off.model.compass.attitudeFilter.restReadIntervalSeconds == DaemonConfiguration().model.compass.attitudeFilter.restReadIntervalSeconds)
    }

    @Test func numbersIgnoreTheLocale() {
        #expect(parseFiniteDouble("0.5") == 0.5)
        #expect(parseFiniteDouble(" -12.25 ") == -12.25)
        #expect(parseFiniteDouble("1e-3") == 0.001)
        #expect(parseFiniteDouble("0,5") == nil)
        #expect(parseFiniteDouble("inf") == nil)
        #expect(parseFiniteDouble("nan") == nil)
        #expect(parseFiniteDouble("0x10") == nil)
        #expect(parseFiniteDouble("") == nil)
    }
}

func repositoryRootPath() -> String {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}
