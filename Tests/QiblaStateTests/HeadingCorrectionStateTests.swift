// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import Testing
import TestSupport
@testable import QiblaState

@Suite struct HeadingCorrectionStateTests {
    @Test func aHeadingCorrectionRoundTripsPerDeviceAndIsRemoved() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = StateStore(directory: dir.path)
        try store.prepare()
        let stored = StoredHeadingCorrection(deviceName: "lis3mdl", devicePath: "/sys/devices/platform/i2c/1-001e",
                                             correctionDegrees: 6.75, timestampUnixSeconds: 1_790_000_000)
        try store.saveHeadingCorrection(stored)
        #expect(try store.loadHeadingCorrection(deviceName: "lis3mdl", devicePath: "/sys/devices/platform/i2c/1-001e").get() == stored)
        // Another sensor of the same kind has its own (absent) file.
        #expect(try store.loadHeadingCorrection(deviceName: "lis3mdl", devicePath: "/sys/devices/platform/i2c/2-001e").get() == nil)
        #expect(StateStore.headingCorrectionFile(deviceName: "lis3mdl", devicePath: "/x").hasPrefix("heading-correction-lis3mdl-"))
        try store.removeHeadingCorrection(deviceName: "lis3mdl", devicePath: "/sys/devices/platform/i2c/1-001e")
        #expect(try store.loadHeadingCorrection(deviceName: "lis3mdl", devicePath: "/sys/devices/platform/i2c/1-001e").get() == nil)
    }

    @Test func anOutOfRangeCorrectionIsSetAside() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = StateStore(directory: dir.path)
        try store.prepare()
        try store.saveHeadingCorrection(StoredHeadingCorrection(deviceName: "m", devicePath: "/p", correctionDegrees: 400,
                                                                timestampUnixSeconds: 0))
        if case .success = store.loadHeadingCorrection(deviceName: "m", devicePath: "/p") {
            Issue.record("a correction of 400° must be refused")
        }
    }
}
