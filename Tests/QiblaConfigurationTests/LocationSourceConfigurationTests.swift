// SPDX-License-Identifier: Apache-2.0
import QiblaConfiguration
import QiblaGeoClue
import Testing

/// `location-source = auto | gpsd | geoclue | none`, owned by QiblaGeoClue's `PositionSourceSelection`.
@Suite struct LocationSourceConfigurationTests {
    @Test func theDefaultIsAutoWithAnExactGeoClueClient() throws {
        let (config, _) = try DaemonConfiguration.parse("")
        #expect(config.positionSource.mode == .auto)
        #expect(config.positionSource.geoclue.desktopId == "qiblad")
        #expect(config.positionSource.geoclue.accuracyLevel == .exact)
        #expect(config.positionSource.geoclue.distanceThresholdMetres == 5)
        #expect(config.positionSource.geoclue.bus == .system)
    }

    @Test(arguments: LocationSourceMode.allCases)
    func everyModeParses(mode: LocationSourceMode) throws {
        let (config, warnings) = try DaemonConfiguration.parse("location-source = \(mode.rawValue)")
        #expect(config.positionSource.mode == mode && warnings.isEmpty)
    }

    @Test func anExplicitGpsdOnTheCommandLineMeansGpsd() throws {
        var (config, _) = try DaemonConfiguration.parse("location-source = geoclue")
        var overrides = ConfigurationOverrides()
        overrides.noGpsd = true
        overrides.apply(to: &config)
        #expect(config.positionSource.mode == .geoclue && config.gpsd == nil, "--no-gpsd leaves GeoClue2 alone")
        overrides = ConfigurationOverrides()
        overrides.gpsd = (host: "127.0.0.1", port: 3000)
        overrides.apply(to: &config)
        #expect(config.positionSource.mode == .gpsd && config.gpsd?.port == 3000)
    }

    @Test func aChangedModeIsAChangedConfiguration() throws {
        let (a, _) = try DaemonConfiguration.parse("location-source = auto")
        let (b, _) = try DaemonConfiguration.parse("location-source = none")
        #expect(a != b && a.positionSource != b.positionSource)
    }
}
