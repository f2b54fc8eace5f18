// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

/// A simulated phone (QiblaSimulator writing a fake IIO sysfs tree) read by the real qiblad
/// through its normal IIO code path, observed on the bus.
final class SimulatedPhone: @unchecked Sendable {
    let directory: TemporaryDirectory
    let simulator: Simulator
    private var thread: Thread?

    /// `buffered`: the devices have IIO buffers whose scans go to FIFOs under ``devRoot``.
    /// `gyroscope`: the phone's gyroscope is simulated too (issue 30). Off by default: these scenes
    /// move the phone from pose to pose in no time, which only a phone without a gyroscope can
    /// follow as the scene means it (a gyroscope would rightly say nothing turned); scenes that move
    /// like a person (`FusedNeedleTests`) turn it on.
    /// `motionEvents`: the accelerometer's wake-on-motion event and its descriptor's stand-in (issue 37).
    init(phone: PhoneModel = .pinephone, scene: Scene, seed: UInt64 = 7, buffered: Bool = false, gyroscope: Bool = false,
         motionEvents: Bool = false) throws {
        directory = try TemporaryDirectory(prefix: "qiblad-phone")
        simulator = try Simulator(phone: phone, scene: scene, sysfsRoot: directory.path + "/sys",
                                  devRoot: directory.path + "/dev", buffered: buffered, gyroscope: gyroscope,
                                  motionEvents: motionEvents, seed: seed)
        _ = try simulator.step(to: 0)
    }

    var sysfsRoot: String { directory.path + "/sys" }
    var devRoot: String { directory.path + "/dev" }

    /// Writes samples at `rate` Hz on a background thread until ``stop()``.
    func start(rate: Double = 20) {
        let simulator = self.simulator
        let t = Thread { try? simulator.run(rateHertz: rate) }
        t.start()
        thread = t
    }

    func stop() {
        simulator.stop()
        _ = waitUntil(timeout: 2) { thread?.isFinished ?? true }
    }

    deinit { stop(); directory.remove() }
}

/// Scene time is irrelevant for a constant orientation; the field comes from WMM2025 today.
func scene(at position: GeodeticPosition, orientation: QiblaSimulator.DeviceOrientation, noise: Double = 0.5) -> Scene {
    Scene(position: position, decimalYear: DecimalYear.from(unixSeconds: Date().timeIntervalSince1970),
          trajectory: .constant(orientation), magnetometerNoiseMicrotesla: noise,
          accelerometerNoiseMetresPerSecondSquared: 0.02)
}

/// A simulated phone writing samples, a qiblad reading it at `location`, and (optionally) a
/// `qiblactl monitor` holding the compass claim. Everything stops when the rig is released.
final class CompassRig: @unchecked Sendable {
    let phone: SimulatedPhone
    let daemon: QibladHarness
    private(set) var monitor: ChildProcess?

    /// `buffered`: the phone's devices have IIO buffers and qiblad reads them (`sensor-mode =
    /// buffered` belongs in `configuration`).
    init(phone model: PhoneModel = .pinephone, scene: Scene, location: String, configuration: String? = nil,
         rate: Double = 20, claim: Bool = true, buffered: Bool = false, gyroscope: Bool = false, motionEvents: Bool = false) throws {
        phone = try SimulatedPhone(phone: model, scene: scene, buffered: buffered, gyroscope: gyroscope, motionEvents: motionEvents)
        daemon = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", phone.sysfsRoot, "--location=\(location)"]
                                   + (buffered || motionEvents ? ["--dev-root", phone.devRoot] : []))
        if let configuration { try daemon.stateDirectory.write(configuration, to: "qiblad.conf") }
        try daemon.start()
        phone.start(rate: rate)
        if claim { try claimCompass() }
    }

    /// Starts a `qiblactl monitor`, which claims the compass and prints every change.
    func claimCompass() throws {
        monitor = try ChildProcess(product("qiblactl").path, ["monitor"], environment: daemon.bus.environment)
    }

    deinit {
        monitor?.terminate()
        daemon.stop()
        phone.stop()
    }
}

@Suite struct CompassIntegrationTests {
    struct Site: Sendable, CustomStringConvertible {
        var name: String
        var latitude: Double
        var longitude: Double
        var description: String { name }
    }

    static let sites = [
        Site(name: "Mecca", latitude: 21.3891, longitude: 39.8579),
        Site(name: "London", latitude: 51.5074, longitude: -0.1278),
        Site(name: "Jakarta", latitude: -6.2088, longitude: 106.8456),
        Site(name: "Reykjavik", latitude: 64.1466, longitude: -21.9426),
        Site(name: "Cape Town", latitude: -33.9249, longitude: 18.4241),
    ]

    /// (heading, pitch, roll): tilts up to 45° in every direction.
    static let flatish: [(Double, Double, Double)] = [
        (10, 0, 0), (100, 30, 0), (190, -30, 20), (280, 20, -35), (330, 0, 45), (45, -40, 10), (225, 25, 25),
        (160, -20, -30), (300, 44, 0), (70, 0, -44), (250, -15, 40), (5, 35, -25),
    ]
    /// Upright in the hand: pitch 60°–120°.
    static let upright: [(Double, Double, Double)] = [
        (20, 90, 0), (135, 60, 5), (250, 75, -10), (300, 105, 8), (80, 120, 0), (190, 95, -5), (340, 65, 12),
        (110, 115, -8),
    ]

    /// Holds each orientation, lets the 0.5 s window settle (`settleSeconds`), reads Heading three
    /// times; returns the errors. `gyroscope`: the phone's gyroscope is simulated too, and reads
    /// zero between the poses (the trajectory jumps): the attitude filter must find each new pose
    /// from the accelerometer and magnetometer alone (`AttitudeFilter`'s recovery rules).
    static func errors(site: Site, orientations: [(Double, Double, Double)], axis: String, backCamera: Bool,
                       gyroscope: Bool = false, settleSeconds: Double = 1.1) throws -> [Double] {
        let position = try GeodeticPosition(latitudeDegrees: site.latitude, longitudeDegrees: site.longitude)
        let first = orientations[0]
        // σ = 0.5 µT against a horizontal field of 10–13 µT (Cape Town, Reykjavik) is ~2.5° per
        // sample; 20 Hz puts ten samples in the 0.5 s window (≈0.8° RMS, too close to the 1° target
        // for a test that must not flake), so these runs sample at 50 Hz (25 samples).
        let rig = try CompassRig(scene: scene(at: position, orientation: .init(headingDegrees: first.0, pitchDegrees: first.1, rollDegrees: first.2)),
                                 location: "\(site.latitude),\(site.longitude)", configuration: "sample-rate = 50\n", rate: 50,
                                 gyroscope: gyroscope)
        let (phone, q) = (rig.phone, rig.daemon)
        #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true }, "\(q.log)")

        var errors: [Double] = []
        for (h, p, r) in orientations {
            phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: h, pitchDegrees: p, rollDegrees: r)) }
            let expected = backCamera ? phone.simulator.scene.expectedBackCameraTrueHeading(at: 0)
                                      : phone.simulator.scene.expectedTrueHeading(at: 0)
            let truth = try #require(expected)
            usleep(useconds_t(settleSeconds * 1_000_000))
            #expect(try q.string("HeadingAxis") == axis, "\(site) \(h),\(p),\(r)")
            for _ in 0..<3 {
                let published = try q.double("Heading")
                #expect(published.isFinite && published >= 0 && published < 360)
                errors.append(abs(Angle.normalized180(published - truth)))
                usleep(100_000)
            }
        }
        return errors
    }

    static func report(_ label: String, _ errors: [Double]) -> (rms: Double, max: Double) {
        let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        let worst = errors.max() ?? .nan
        print("heading accuracy \(label): n=\(errors.count) RMS \(String(format: "%.3f", rms))° max \(String(format: "%.3f", worst))°")
        return (rms, worst)
    }

    @Test(arguments: sites)
    func headingIsAccurateFlatAndTilted(site: Site) throws {
        // Each pose is read 2 s after the jump: a phone without a gyroscope rests after 1 s still
        // (issue 37) and reads at 2 Hz then, so the jump may be seen half a second late before the
        // 0.5-s window fills; 1.1 s failed now and then on 2 busy cores (Cape Town, worst 7.4°).
        // How fast a turn after a rest is seen is measured on its own (BENCHMARKS.md).
        let e = try Self.errors(site: site, orientations: Self.flatish, axis: "top", backCamera: false, settleSeconds: 2)
        let (rms, worst) = Self.report("\(site) top", e)
        #expect(rms <= 1.0)
        #expect(worst <= 3.0)
    }

    /// The same poses with the gyroscope (London): each jump is a motion the gyroscope missed;
    /// the filter's recovery rules (a still accelerometer against its vertical after 0.4 s, a still
    /// phone's agreeing field against its yaw after 1 s) must find the pose, within the legacy
    /// test's settle time (1.1 s; every pose here changes the tilt, which the 0.4 s rule finds).
    @Test func headingIsAccurateFlatAndTiltedWithTheGyroscope() throws {
        let site = Self.sites[1]
        let e = try Self.errors(site: site, orientations: Self.flatish, axis: "top", backCamera: false,
                                gyroscope: true, settleSeconds: 1.1)
        let (rms, worst) = Self.report("\(site) top with the gyroscope", e)
        #expect(rms <= 1.0)
        #expect(worst <= 3.0)
    }

    @Test(arguments: sites)
    func headingIsAccurateUprightWithTheBackCamera(site: Site) throws {
        let e = try Self.errors(site: site, orientations: Self.upright, axis: "back", backCamera: true)
        let (rms, worst) = Self.report("\(site) back", e)
        #expect(rms <= 1.0)
        #expect(worst <= 3.0)
    }

    @Test func oscillatingAcrossNorthNeverPublishesSouth() throws {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        var s = scene(at: london, orientation: .init(headingDegrees: 359), noise: 0.3)
        // Every sample alternates between 359° and 1° true.
        s.trajectory = .custom { t in QiblaSimulator.DeviceOrientation(headingDegrees: Int((t * 20).rounded()) % 2 == 0 ? 359 : 1) }
        let rig = try CompassRig(scene: s, location: "51.5074,-0.1278")
        let (q, claim) = (rig.daemon, try #require(rig.monitor))
        #expect(waitUntil(timeout: 15) { ((try? q.double("Heading")) ?? .nan).isFinite })
        var seen: [Double] = []
        for _ in 0..<40 {
            seen.append(try q.double("Heading"))
            usleep(50_000)
        }
        let worst = seen.map { abs(Angle.normalized180($0)) }.max() ?? 180
        #expect(worst < 3, "published \(seen)")
        // And the monitor (every PropertiesChanged) never saw anything near 180° either.
        let headings = claim.standardOutput.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.hasPrefix("Heading=") }
            .compactMap { Double($0.dropFirst("Heading=".count)) }
        #expect(!headings.isEmpty, "\(claim.standardOutput)")
        #expect(headings.allSatisfy { abs(Angle.normalized180($0)) < 3 }, "\(headings)")
    }

    @Test func aSuddenTurnIsFollowedQuicklyAndTheLatencyIsReported() throws {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let rig = try CompassRig(scene: scene(at: london, orientation: .init(headingDegrees: 30), noise: 0.3), location: "51.5074,-0.1278")
        let (phone, q) = (rig.phone, rig.daemon)
        #expect(waitUntil(timeout: 15) { abs(Angle.normalized180(((try? q.double("Heading")) ?? .nan) - 30)) < 3 })
        phone.simulator.updateScene { $0.trajectory = .constant(.init(headingDegrees: 120)) }
        let turned = Date()
        #expect(waitUntil(timeout: 5) { abs(Angle.normalized180(((try? q.double("Heading")) ?? .nan) - 120)) < 3 })
        let latency = Date().timeIntervalSince(turned)
        print("a 90° turn reached the Heading property within 3° after \(Int(latency * 1000)) ms (20 Hz sampling, busctl polling)")
        #expect(latency < 2, "the smoothing window must reset after a large turn, not lag through it")
    }

    @Test(arguments: [(PhoneModel.pinephone, true), (.pinephonePro, true), (.librem5, true), (.qualcomm, false)])
    func hasCompassForEachSimulatedPhone(phone model: PhoneModel, expected: Bool) throws {
        let london = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let rig = try CompassRig(phone: model, scene: scene(at: london, orientation: .init(headingDegrees: 200)),
                                 location: "51.5074,-0.1278", claim: false)
        let q = rig.daemon
        #expect(try q.bool("HasCompass") == false, "unknown until claimed")
        try rig.claimCompass()
        if expected {
            #expect(waitUntil(timeout: 15) { (try? q.bool("HasCompass")) == true }, "\(model): \(q.log)")
            #expect(waitUntil(timeout: 10) { abs(Angle.normalized180(((try? q.double("Heading")) ?? .nan) - 200)) < 3 }, "\(model)")
        } else {
            #expect(waitUntil(timeout: 10) { q.log.contains("no compass") }, "\(q.log)")
            #expect(try q.bool("HasCompass") == false)
            #expect(q.log.contains("Qualcomm") || q.log.contains("no IIO magnetometer"), "\(q.log)")
        }
    }
}
