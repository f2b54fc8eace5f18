// SPDX-License-Identifier: Apache-2.0
extension SensorConfiguration: Equatable {
    /// Equal when every user-visible setting is (the test hooks are not compared); a reload
    /// restarts the sensors only when this is false.
    public static func == (a: Self, b: Self) -> Bool {
        a.sysfsRoot == b.sysfsRoot && a.devRoot == b.devRoot && a.udevDataDirectory == b.udevDataDirectory && a.mode == b.mode
            && a.sampleRateHertz == b.sampleRateHertz && a.handOffInterval == b.handOffInterval
            && a.gyroscopeSampleRateHertz == b.gyroscopeSampleRateHertz
            && a.gyroscopeHandOffInterval == b.gyroscopeHandOffInterval
            && a.preferredMagnetometerName == b.preferredMagnetometerName
            && a.preferredAccelerometerName == b.preferredAccelerometerName
            && a.magnetometerMountMatrixOverride == b.magnetometerMountMatrixOverride
            && a.accelerometerMountMatrixOverride == b.accelerometerMountMatrixOverride
            && a.gyroscopeEnabled == b.gyroscopeEnabled && a.preferredGyroscopeName == b.preferredGyroscopeName
            && a.gyroscopeMountMatrixOverride == b.gyroscopeMountMatrixOverride
    }
}
