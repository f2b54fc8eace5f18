// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import Testing
import QiblaConfiguration
import QiblaIIO

@Suite struct GyroscopeConfigurationTests {
    @Test func theGyroscopeIsReadByDefault() throws {
        let (config, _) = try DaemonConfiguration.parse("")
        #expect(config.sensors.gyroscopeEnabled)
        #expect(config.sensors.preferredGyroscopeName == nil && config.sensors.gyroscopeMountMatrixOverride == nil)
    }

    @Test(arguments: [("off", false, nil), ("OFF", false, nil), ("none", false, nil), ("auto", true, nil),
                      ("mpu6050", true, "mpu6050"), ("lsm9ds1_gyro", true, "lsm9ds1_gyro")] as [(String, Bool, String?)])
    func gyroscopeKey(value: String, enabled: Bool, name: String?) throws {
        let (config, warnings) = try DaemonConfiguration.parse("gyroscope = \(value)\n")
        #expect(warnings.isEmpty)
        #expect(config.sensors.gyroscopeEnabled == enabled)
        #expect(config.sensors.preferredGyroscopeName == name)
        #expect((config == DaemonConfiguration()) == (enabled && name == nil))
    }

    @Test func aLaterLayerWins() throws {
        let (config, _) = try DaemonConfiguration.parse(layers: [(file: "/etc/qiblad/qiblad.conf", text: "gyroscope = off\n"),
                                                                 (file: "user", text: "gyroscope = auto\n")])
        #expect(config.sensors.gyroscopeEnabled)
    }

    @Test func theMountMatrixOverride() throws {
        let (config, _) = try DaemonConfiguration.parse("gyroscope-mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1\n")
        #expect(config.sensors.gyroscopeMountMatrixOverride == Matrix3(0, 1, 0, -1, 0, 0, 0, 0, 1))
        #expect(config != DaemonConfiguration())
    }

    @Test(arguments: ["gyroscope = mpu 6050", "gyroscope-mount-matrix = 1, 0, 0; 0, 0, 0; 0, 0, 1", "gyroscope-mount-matrix = yes"])
    func badValuesAreErrorsNamingTheKey(line: String) {
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(line + "\n") }
        do {
            _ = try DaemonConfiguration.parse(line + "\n")
        } catch {
            #expect(error.description.contains("gyroscope"), "\(error)")
        }
    }
}
