// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaCore
import Testing
import TestSupport
@testable import QiblaState

@Suite struct StateStoreTests {
    @Test func aLocationRoundTripsExactly() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = StateStore(directory: dir.path + "/nested/qiblad")
        let position = try GeodeticPosition(latitudeDegrees: -33.868820000000003, longitudeDegrees: 151.209296, heightMetres: 25.1)
        let location = Location(position: position, horizontalAccuracyMetres: 4.2, timestampUnixSeconds: 1_795_000_000.125)
        try store.saveLocation(location, as: StateStore.lastKnownLocationFile)
        let loaded = try store.loadLocation(StateStore.lastKnownLocationFile).get()
        #expect(loaded == location)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/nested/qiblad")
        #expect(files == [StateStore.lastKnownLocationFile], "no temporary file left behind: \(files)")
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/nested/qiblad/" + StateStore.lastKnownLocationFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aMissingFileIsNoLocation() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        #expect(try StateStore(directory: dir.path).loadLocation("manual-location").get() == nil)
    }

    @Test func removingTheManualLocationDeletesOnlyThatFile() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = StateStore(directory: dir.path)
        let location = Location(position: .init(uncheckedLatitude: 1, longitude: 2), horizontalAccuracyMetres: nil, timestampUnixSeconds: 3)
        try store.saveLocation(location, as: StateStore.manualLocationFile)
        try store.saveLocation(location, as: StateStore.lastKnownLocationFile)
        try store.saveLocation(nil, as: StateStore.manualLocationFile)
        #expect(try store.loadLocation(StateStore.manualLocationFile).get() == nil)
        #expect(try store.loadLocation(StateStore.lastKnownLocationFile).get() == location)
    }

    @Test(arguments: [
        "latitude = 95\nlongitude = 0\n",
        "latitude = north\nlongitude = 0\n",
        "longitude = 10\n",
        "this is not a state file\n",
        "format = 7\nlatitude = 1\nlongitude = 2\n",
        "latitude = nan\nlongitude = 0\n",
    ])
    func aCorruptFileIsSetAsideAndReported(text: String) throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try dir.write(text, to: "manual-location")
        let store = StateStore(directory: dir.path)
        switch store.loadLocation("manual-location") {
        case .success(let l): Issue.record("accepted \(String(describing: l))")
        case .failure(let problem):
            let aside = try #require(problem.setAsidePath)
            #expect(try String(contentsOfFile: aside, encoding: .utf8) == text, "kept byte for byte")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/manual-location"))
            #expect(problem.description.contains("moved aside"))
        }
        // The next start sees no file and carries on.
        #expect(try store.loadLocation("manual-location").get() == nil)
    }

    @Test func binaryGarbageIsSetAside() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try Data([0xff, 0xfe, 0x00, 0x80]).write(to: dir.url.appendingPathComponent("last-known-location"))
        let result = StateStore(directory: dir.path).loadLocation("last-known-location")
        guard case .failure(let problem) = result else { Issue.record("accepted"); return }
        #expect(problem.reason.contains("UTF-8"))
    }

    @Test func xdgStateHomeIsHonoured() {
        #expect(StateStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/qiblad")
        #expect(StateStore.defaultDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/qiblad")
        #expect(StateStore.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/qiblad")
    }
}
