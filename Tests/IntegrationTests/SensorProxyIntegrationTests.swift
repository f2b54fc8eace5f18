// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import QiblaSimulator
import Testing
import TestSupport

// The rig (Debian's iio-sensor-proxy under umockdev on a private system bus) is SensorProxyRig in
// Tests/TestSupport, shared with the app's SensorProxyAppTests.

@Suite(.serialized, .enabled(if: SensorProxyRig.available, "Debian's iio-sensor-proxy is not installed"))
struct SensorProxyIntegrationTests {
    static let london = "51.5074,-0.1278"

    /// qiblad on a simulated Qualcomm phone (an accelerometer only: no raw magnetometer), its
    /// system bus the rig's.
    func qiblad(_ rig: SensorProxyRig, phone model: PhoneModel = .qualcomm, configuration: String? = nil) throws -> (SimulatedPhone, QibladHarness) {
        let position = try GeodeticPosition(latitudeDegrees: 51.5074, longitudeDegrees: -0.1278)
        let phone = try SimulatedPhone(phone: model, scene: scene(at: position, orientation: .init(headingDegrees: 200)))
        let q = try QibladHarness(arguments: ["--no-gpsd", "--sysfs-root", phone.sysfsRoot, "--location=\(Self.london)"])
        q.environment = rig.environment
        if let configuration { try q.stateDirectory.write(configuration, to: "qiblad.conf") }
        try q.start()
        phone.start(rate: 20)
        return (phone, q)
    }

    func claim(_ q: QibladHarness) throws -> ChildProcess {
        try ChildProcess(product("qiblactl").path, ["monitor"], environment: q.bus.environment)
    }

    /// A rig with iio-sensor-proxy running, a qiblad on it and a `qiblactl monitor` holding a
    /// claim; all stop when it goes.
    final class Claimed {
        let rig: SensorProxyRig
        let phone: SimulatedPhone
        let q: QibladHarness
        let monitor: ChildProcess
        init(_ rig: SensorProxyRig, _ phone: SimulatedPhone, _ q: QibladHarness, _ monitor: ChildProcess) {
            (self.rig, self.phone, self.q, self.monitor) = (rig, phone, q, monitor)
        }
        deinit { monitor.terminate(); q.stop(); phone.stop() }
    }

    func claimed(dropIn: Bool = true, sensorHubRawHeading: Int32? = nil, phone model: PhoneModel = .qualcomm,
                 configuration: String? = nil) throws -> Claimed {
        let rig = try SensorProxyRig(dropIn: dropIn)
        try rig.startProxy(sensorHubRawHeading: sensorHubRawHeading)
        let (phone, q) = try qiblad(rig, phone: model, configuration: configuration)
        return Claimed(rig, phone, q, try claim(q))
    }

    @Test func aQualcommPhoneGetsTheHeadingOfIioSensorProxysCompassAndLosesItWhenTheProxyStops() throws {
        let rig = try SensorProxyRig(dropIn: true)
        try rig.startProxy()
        let (phone, q) = try qiblad(rig); defer { q.stop(); phone.stop() }
        guard let pid = q.daemon?.pid else { Issue.record("qiblad did not start"); return }
        // Unclaimed: no connection to the system bus at all (zero cost).
        usleep(500_000)
        #expect(rig.connections(of: pid).isEmpty, "unclaimed qiblad must not talk to iio-sensor-proxy")
        #expect(try q.string("HeadingSource") == "none")

        let monitor = try claim(q)
        #expect(waitUntil(timeout: 20) { (try? q.string("HeadingSource")) == "iio-sensor-proxy" }, "\(q.log)\n\(rig.proxy?.standardError ?? "")")
        #expect(try q.bool("HasCompass"))
        // The fake compass turns 10° a second: each published magnetic heading is one of its
        // values, the true heading adds the declination here, and the values move (fresh, not stale).
        var seen = Set<Double>()
        #expect(waitUntil(timeout: 10) {
            guard let magnetic = try? q.double("MagneticHeading"), magnetic.isFinite else { return false }
            seen.insert(magnetic)
            return seen.count >= 3
        }, "\(seen) \(q.log)")
        for magnetic in seen {
            #expect(magnetic.truncatingRemainder(dividingBy: 10) == 0, "\(magnetic) is not the fake compass's")
        }
        let declination = try q.double("Declination")
        #expect(declination.isFinite && abs(declination) < 5, "London's declination: \(declination)")
        // True = magnetic + declination, read between two equal magnetic readings (the fake turns each second).
        var pair = (magnetic: Double.nan, heading: Double.nan)
        #expect(waitUntil(timeout: 10) {
            guard let m1 = try? q.double("MagneticHeading"), let h = try? q.double("Heading"),
                  let m2 = try? q.double("MagneticHeading"), m1 == m2 else { return false }
            pair = (m1, h)
            return true
        })
        #expect(abs(Angle.normalized180(pair.heading - (pair.magnetic + declination))) < 1e-9, "\(pair), declination \(declination)")
        #expect(try q.string("HeadingAxis") == "top")
        #expect(try q.double("HeadingError") == 20)
        #expect(try q.string("CompassAccuracy") == "low")
        #expect(try q.bool("CalibrationNeeded") == false)
        #expect(try q.string("CalibrationHint") == "none")
        #expect(try q.double("QiblaRelativeBearing").isFinite)
        #expect(q.log.contains("heading from iio-sensor-proxy's compass"), "\(q.log)")
        // qiblactl names the source, in its status line and in its JSON.
        let status = try run(product("qiblactl").path, ["status"], environment: q.bus.environment)
        #expect(status.stdout.contains("true from iio-sensor-proxy, accuracy low"), "\(status)")
        let json = try run(product("qiblactl").path, ["status", "--json"], environment: q.bus.environment)
        #expect(json.stdout.contains("\"HeadingSource\": \"iio-sensor-proxy\""), "\(json)")

        // iio-sensor-proxy stops: the heading is withdrawn, not kept.
        rig.stopProxy()
        #expect(waitUntil(timeout: 10) { (try? q.string("HeadingSource")) == "none" }, "\(q.log)")
        #expect(try q.double("Heading").isNaN)
        #expect(try q.bool("HasCompass") == false)
        // It starts again: qiblad claims it again and the heading comes back.
        try rig.startProxy()
        #expect(waitUntil(timeout: 20) { (try? q.string("HeadingSource")) == "iio-sensor-proxy" && ((try? q.double("Heading")) ?? .nan).isFinite },
                "\(q.log)")

        // The last claim goes: qiblad releases the compass and leaves the system bus.
        monitor.terminate()
        #expect(waitUntil(timeout: 10) { rig.connections(of: pid).isEmpty }, "qiblad keeps a system-bus connection after the last release")
        #expect(try q.string("HeadingSource") == "none")
    }

    /// A tablet's HID sensor hub: iio-sensor-proxy's IIO buffer compass reads the hub's
    /// tilt-compensated heading (`in_rot_from_north_magnetic_tilt_comp`) and qiblad publishes it.
    @Test func aSensorHubsTiltCompensatedHeadingIsPublished() throws {
        let setup = try claimed(sensorHubRawHeading: 1234)
        defer { withExtendedLifetime(setup) {} }   // the claim, qiblad and the phone live to the end
        let (rig, q) = (setup.rig, setup.q)
        // iio-sensor-proxy reads the scale as a C float: 1234 × 0.1f = 123.400002.
        #expect(waitUntil(timeout: 20) { abs(((try? q.double("MagneticHeading")) ?? .nan) - 123.4) < 1e-4 },
                "\(q.log)\n\(rig.proxy?.standardOutput.suffix(3000) ?? "")\n\(rig.proxy?.standardError.suffix(3000) ?? "")")
        #expect(try q.string("HeadingSource") == "iio-sensor-proxy")
        let declination = try q.double("Declination")
        #expect(abs(Angle.normalized180(try q.double("Heading") - (123.4 + declination))) < 1e-4)
        // The hub turns: the new heading arrives (iio-sensor-proxy reads the buffer every 700 ms).
        try rig.setSensorHubRawHeading(3001)
        #expect(waitUntil(timeout: 10) { abs(((try? q.double("MagneticHeading")) ?? .nan) - 300.1) < 1e-4 }, "\(q.log)")
        // It holds still: iio-sensor-proxy signals nothing, qiblad confirms the heading (a Get
        // after 5 s without a change) and keeps it.
        sleep(7)
        #expect(abs(try q.double("MagneticHeading") - 300.1) < 1e-4, "\(q.log)")
        #expect(try q.string("HeadingSource") == "iio-sensor-proxy")
    }

    /// iio-sensor-proxy hangs (SIGSTOP): it keeps its name, so only the staleness limit can tell.
    /// The heading last signalled is confirmed after 5 s without a change by a Get answered within
    /// 2 s; unanswered, it is withdrawn, and it comes back once the proxy answers again.
    @Test func aHungIioSensorProxyIsNotTrustedPastTheStalenessLimit() throws {
        let setup = try claimed()
        defer { withExtendedLifetime(setup) {} }   // the claim, qiblad and the phone live to the end
        let (rig, q) = (setup.rig, setup.q)
        #expect(waitUntil(timeout: 20) { ((try? q.double("Heading")) ?? .nan).isFinite }, "\(q.log)")
        let pid = try #require(rig.ownerPID())
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let stopped = Date()
        #expect(waitUntil(timeout: 20) { (try? q.string("HeadingSource")) == "none" }, "\(q.log)")
        let withdrawnAfter = Date().timeIntervalSince(stopped)
        print("a hung iio-sensor-proxy's heading was withdrawn after \(Int(withdrawnAfter * 1000)) ms (limit: 5 s + a 2 s Get)")
        #expect(try q.double("Heading").isNaN && q.bool("HasCompass") == false)
        kill(pid, SIGCONT)
        #expect(waitUntil(timeout: 40) { ((try? q.double("Heading")) ?? .nan).isFinite }, "\(q.log)")
        #expect(try q.string("HeadingSource") == "iio-sensor-proxy")
    }

    @Test func withoutThePolicyDropInTheClaimIsRefusedAndSaidSo() throws {
        let setup = try claimed(dropIn: false)
        defer { withExtendedLifetime(setup) {} }   // the claim, qiblad and the phone live to the end
        let q = setup.q
        #expect(waitUntil(timeout: 20) { q.log.contains("iio-sensor-proxy refused its compass to this user") }, "\(q.log)")
        #expect(try q.string("HeadingSource") == "none")
        #expect(try q.bool("HasCompass") == false)
        #expect(try q.double("Heading").isNaN)
    }

    @Test func theDropInGrantsTheCompassAndNothingWider() throws {
        let rig = try SensorProxyRig(dropIn: true)
        try rig.startProxy()
        let compass = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy/Compass"]
        let get = try rig.systemBus.busctl(["get-property"] + compass + ["net.hadess.SensorProxy.Compass", "HasCompass"])
        #expect(get.status == 0 && get.stdout.contains("true"), "\(get)")
        let introspect = try rig.systemBus.busctl(["call"] + compass + ["org.freedesktop.DBus.Introspectable", "Introspect"])
        if SensorProxyRig.packagedPolicyRestrictsCompass {
            // Introspecting the compass object stays GeoClue's (3.0's policy denies it to others).
            #expect(introspect.status != 0 && introspect.stderr.contains("denied"), "\(introspect)")
        } else {
            // 3.5 and later leave the compass object open on the bus and ask polkit before a claim
            // (withoutThePolicyDropInTheClaimIsRefusedAndSaidSo): the drop-in changes nothing there.
            #expect(SensorProxyRig.asksPolkit, "\(SensorProxyRig.packagedPolicy) leaves the compass open and no polkit action guards it")
            #expect(introspect.status == 0 && introspect.stdout.contains("net.hadess.SensorProxy.Compass"), "\(introspect)")
        }
    }

    @Test func aPhoneWithARawMagnetometerIsServedByItInAutoAndIioSensorProxyIsNotClaimed() throws {
        let setup = try claimed(phone: .pinephone)
        defer { withExtendedLifetime(setup) {} }   // the claim, qiblad and the phone live to the end
        let (rig, q) = (setup.rig, setup.q)
        #expect(waitUntil(timeout: 20) { (try? q.string("HeadingSource")) == "magnetometer" }, "\(q.log)")
        #expect(waitUntil(timeout: 10) { abs(Angle.normalized180(((try? q.double("Heading")) ?? .nan) - 200)) < 3 }, "\(q.log)")
        guard let pid = q.daemon?.pid else { return }
        #expect(rig.connections(of: pid).isEmpty, "the raw magnetometer serves: iio-sensor-proxy's compass is not claimed")
        #expect(!q.log.contains("claimed iio-sensor-proxy's compass"))
    }

    @Test func headingSourceIioSensorProxyServesItEvenBesideARawMagnetometer() throws {
        let setup = try claimed(phone: .pinephone, configuration: "heading-source = iio-sensor-proxy\n")
        defer { withExtendedLifetime(setup) {} }   // the claim, qiblad and the phone live to the end
        let q = setup.q
        #expect(waitUntil(timeout: 20) { (try? q.string("HeadingSource")) == "iio-sensor-proxy" }, "\(q.log)")
        #expect(waitUntil(timeout: 10) { ((try? q.double("MagneticHeading")) ?? .nan).truncatingRemainder(dividingBy: 10) == 0 })
    }
}
