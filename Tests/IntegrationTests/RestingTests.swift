// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

/// Issue 25 (first part): a claimed compass on a phone that lies still reads its sensors at
/// `rest-sample-rate`, and the first motion brings the full rate back; through the real daemon on
/// a simulated phone.
@Suite(.serialized) struct RestingTests {
    static func rig(configuration: String? = nil) throws -> CompassRig {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let scene = Scene(position: london, decimalYear: CalibrationIntegrationTests.now,
                          trajectory: .constant(.init(headingDegrees: 30)), magnetometerNoiseMicrotesla: 0.3,
                          accelerometerNoiseMetresPerSecondSquared: 0.03)
        return try CompassRig(scene: scene, location: "51.5074,-0.1278", configuration: configuration)
    }

    /// The daemon's wakeups (context switches) a second while the phone lies still.
    static func stillWakeupsPerSecond(_ rig: CompassRig) throws -> Double {
        let pid = try #require(rig.daemon.daemon?.pid)
        #expect(waitUntil(timeout: 15) { (try? rig.daemon.double("Heading"))?.isFinite == true })
        sleep(3)  // past the 2 s that make a rest
        return Double(try IdleTests.wakeups(of: pid, during: 4)) / 4
    }

    @Test func aStillPhoneIsReadSlowlyAndATurnIsFollowedAtOnce() throws {
        let full = try Self.rig(configuration: "rest-sample-rate = off\n")
        let fullRate = try Self.stillWakeupsPerSecond(full)
        let rig = try Self.rig()
        let resting = try Self.stillWakeupsPerSecond(rig)
        let (phone, q) = (rig.phone, rig.daemon)
        #expect(abs(Angle.normalized180(try q.double("Heading") - 30)) < 2, "the heading at rest stays right")
        // A turn after the rest.
        phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: 120)) }
        let turned = Date()
        var firstMove: Double?
        #expect(waitUntil(timeout: 5) {
            let heading = (try? q.double("Heading")) ?? .nan
            if firstMove == nil, abs(Angle.normalized180(heading - 30)) > 2 { firstMove = Date().timeIntervalSince(turned) }
            return abs(Angle.normalized180(heading - 120)) < 2
        })
        let settled = Date().timeIntervalSince(turned)
        print("resting: a still, claimed qiblad woke \(fullRate)/s at the full 20 Hz and \(resting)/s at rest-sample-rate 4; "
              + "after the rest a 90° turn first moved Heading after \(Int((firstMove ?? .nan) * 1000)) ms, within 2° after "
              + "\(Int(settled * 1000)) ms (busctl polling)")
        #expect(resting < fullRate / 2, "rest: \(resting)/s, full rate: \(fullRate)/s")
        #expect(settled < 1, "within 2° of the new heading after \(settled) s")
        // Moving again: the full rate is back.
        sleep(1)
        phone.simulator.updateScene { $0.trajectory = .rotating(startHeadingDegrees: 120, degreesPerSecond: 40) }
        let moving = Double(try IdleTests.wakeups(of: try #require(q.daemon?.pid), during: 2)) / 2
        #expect(moving > resting * 1.5, "moving: \(moving)/s, resting: \(resting)/s")
    }
}
