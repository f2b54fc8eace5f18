// SPDX-License-Identifier: Apache-2.0
import QiblaConfiguration
import QiblaDaemon
import Testing

/// `heading-source = auto | magnetometer | iio-sensor-proxy`, owned by QiblaDaemon's `HeadingSourceModel`.
@Suite struct HeadingSourceConfigurationTests {
    @Test func theDefaultIsAuto() throws {
        #expect(try DaemonConfiguration.parse("").0.model.headingSource == .auto)
    }

    @Test(arguments: HeadingSourceModel.Selection.allCases)
    func everySelectionParses(selection: HeadingSourceModel.Selection) throws {
        let (config, warnings) = try DaemonConfiguration.parse("heading-source = \(selection.rawValue)")
        #expect(config.model.headingSource == selection && warnings.isEmpty)
    }

    @Test func aBadValueNamesTheKeyAndTheChoices() {
        #expect(throws: ConfigurationError(line: 2, key: "heading-source",
                                           message: "'geoclue' is not auto, magnetometer or iio-sensor-proxy")) {
            try DaemonConfiguration.parse("# compass\nheading-source = geoclue")
        }
    }
}
