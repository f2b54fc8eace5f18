// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// What clients see: the value of every `io.github.qiblad.Qibla1` property, typed. A view built
/// from the models by ``DaemonModel/properties``; nothing reads values back out of it.
/// NaN means "unknown" for doubles (dbus/io.github.qiblad.Qibla1.xml).
public struct PublishedProperties: Sendable, Equatable {
    public var latitude = Double.nan
    public var longitude = Double.nan
    public var altitude = Double.nan
    public var locationAccuracy = Double.nan
    public var locationTimestampMicroseconds: UInt64 = 0
    public var locationSource = LocationSource.none
    /// `source=state` pairs of the live sources (``LocationModel/sourcesSummary``).
    public var locationSources = ""

    public var qiblaBearing = Double.nan
    public var qiblaBearingGeodesic = Double.nan
    public var kaabaDistance = Double.nan
    public var declination = Double.nan

    public var hasCompass = false
    public var heading = Double.nan
    public var magneticHeading = Double.nan
    public var headingAxis = HeadingAxis.none
    /// `magnetometer`, `iio-sensor-proxy` or `none` (``HeadingSource``).
    public var headingSource = HeadingSource.none
    /// The heading comes from the gyroscope-aided attitude filter.
    public var headingFused = false
    public var qiblaRelativeBearing = Double.nan
    public var compassAccuracy = CompassAccuracy.unknown
    public var headingError = Double.nan
    public var calibrationNeeded = false
    public var calibrationProgress = 0.0
    public var calibrationState = MagnetometerCalibrator.State.collecting
    public var calibrationHint = CalibrationHint.none
    public var calibrationResidual = Double.nan
    public var hardIronOffsetMagnitude = Double.nan
    public var magneticInterference = false

    public var nextQiblaSunTimeMicroseconds: UInt64 = 0
    /// `sun`, `shadow` or `none`.
    public var nextQiblaSunKind = "none"

    public var version = qiblaVersion

    public init() {}

    /// The value of `property` as it goes on the bus.
    public subscript(property: QiblaProperty) -> PropertyValue {
        switch property {
        case .latitude: .double(latitude)
        case .longitude: .double(longitude)
        case .altitude: .double(altitude)
        case .locationAccuracy: .double(locationAccuracy)
        case .locationTimestamp: .uint64(locationTimestampMicroseconds)
        case .locationSource: .string(locationSource.rawValue)
        case .locationSources: .string(locationSources)
        case .qiblaBearing: .double(qiblaBearing)
        case .qiblaBearingGeodesic: .double(qiblaBearingGeodesic)
        case .kaabaDistance: .double(kaabaDistance)
        case .declination: .double(declination)
        case .hasCompass: .bool(hasCompass)
        case .heading: .double(heading)
        case .magneticHeading: .double(magneticHeading)
        case .headingAxis: .string(headingAxis.rawValue)
        case .headingSource: .string(headingSource.rawValue)
        case .headingFused: .bool(headingFused)
        case .qiblaRelativeBearing: .double(qiblaRelativeBearing)
        case .compassAccuracy: .string(compassAccuracy.rawValue)
        case .headingError: .double(headingError)
        case .calibrationNeeded: .bool(calibrationNeeded)
        case .calibrationProgress: .double(calibrationProgress)
        case .calibrationState: .string(calibrationState.rawValue)
        case .calibrationHint: .string(calibrationHint.rawValue)
        case .calibrationResidual: .double(calibrationResidual)
        case .hardIronOffsetMagnitude: .double(hardIronOffsetMagnitude)
        case .magneticInterference: .bool(magneticInterference)
        case .nextQiblaSunTime: .uint64(nextQiblaSunTimeMicroseconds)
        case .nextQiblaSunKind: .string(nextQiblaSunKind)
        case .version: .string(version)
        }
    }

    /// Properties whose values differ between `self` and `other` (NaN equals NaN).
    public func changedProperties(comparedTo other: PublishedProperties) -> [QiblaProperty] {
        QiblaProperty.allCases.filter { self[$0] != other[$0] }
    }
}
