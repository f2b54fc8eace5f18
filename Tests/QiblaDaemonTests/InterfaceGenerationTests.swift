// SPDX-License-Identifier: Apache-2.0
import Foundation
import QiblaInterface
import Testing
import TestSupport

@Suite struct InterfaceGenerationTests {
    @Test func theGeneratedTableMatchesTheInterfaceXML() throws {
        let result = try run("/usr/bin/env", ["python3", repositoryRoot.path + "/scripts/generate-interface.py", "--check"])
        #expect(result.status == 0, "run scripts/generate-interface.py: \(result.stderr)")
    }

    @Test func theEmbeddedXMLIsTheFileInDbus() throws {
        let file = try String(contentsOfFile: repositoryRoot.path + "/dbus/io.github.qiblad.Qibla1.xml", encoding: .utf8)
        #expect(qiblaInterfaceXML + "\n" == file || qiblaInterfaceXML == file)
        #expect(qiblaInterfaceXML.contains("<property name=\"\(QiblaProperty.calibrationProgress.rawValue)\""))
    }
}
