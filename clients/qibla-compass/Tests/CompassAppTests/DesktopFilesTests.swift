// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

// The app as a desktop citizen: the desktop entry and the metainfo pass their validators, the
// translation template holds every tr("…") string of the sources (and nothing else), the
// translations keep the placeholders, and `make install` puts every file where desktops look.
// Needs desktop-file-validate (desktop-file-utils), appstreamcli (appstream), xgettext/msgfmt
// (gettext) and make.

@Suite struct DesktopFilesTests {
    /// clients/qibla-compass, from this file's place.
    static let package = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let appID = "io.github.qiblad.Compass"

    static func path(_ relative: String) -> String { package.appendingPathComponent(relative).path }
    static func read(_ relative: String) throws -> String { try String(contentsOfFile: path(relative), encoding: .utf8) }

    /// The languages in po/LINGUAS.
    static func languages() throws -> [String] {
        try read("po/LINGUAS").split(separator: "\n")
            .flatMap { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?.split(separator: " ") ?? [] }
            .map(String.init)
    }

    // MARK: validators

    @Test func desktopEntryIsValid() throws {
        let result = try run("desktop-file-validate", [Self.path("data/\(Self.appID).desktop")])
        let output = result.stdout + result.stderr
        #expect(result.status == 0, "\(output)")
        let complaints = output.split(separator: "\n").filter { $0.contains(": error: ") || $0.contains(": warning: ") }
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))")

        let entry = try Self.read("data/\(Self.appID).desktop")
        for line in ["Exec=qibla-compass", "Icon=\(Self.appID)", "StartupNotify=true", "DBusActivatable=false",
                     "X-Purism-FormFactor=Workstation;Mobile;"] {
            #expect(entry.split(separator: "\n").contains(Substring(line)), "the desktop entry lacks \(line)")
        }
    }

    @Test func metainfoIsValid() throws {
        let result = try run("appstreamcli", ["validate", "--no-net", Self.path("data/\(Self.appID).metainfo.xml")])
        let output = result.stdout + result.stderr
        #expect(result.status == 0, "\(output)")
        let complaints = output.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))")

        let metainfo = try Self.read("data/\(Self.appID).metainfo.xml")
        #expect(metainfo.contains("<id>\(Self.appID)</id>"))
        #expect(metainfo.contains("<launchable type=\"desktop-id\">\(Self.appID).desktop</launchable>"))
        // The newest release is the version the binaries report (Sources/Interface of the daemon).
        let versionFile = try String(contentsOf: repositoryRoot.appendingPathComponent("Sources/Interface/PropertyValue.swift"), encoding: .utf8)
        let version = try #require(versionFile.firstMatch(of: /qiblaVersion = "([^"]+)"/)?.1)
        let newest = try #require(metainfo.firstMatch(of: /<release version="([^"]+)"/)?.1)
        #expect(newest == version, "metainfo's newest release \(newest), qiblaVersion \(version)")
    }

    // MARK: translations

    /// Every `tr("…")` literal in Sources/, unescaped, with the file it is in.
    static func sourceMessages() throws -> [(message: String, file: String)] {
        let sources = package.appendingPathComponent("Sources")
        var found: [(String, String)] = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /\btr\("((?:[^"\\\n]|\\.)*)"\)/) {
                found.append((unescape(String(match.1)), String(file.path.dropFirst(package.path.count + 1))))
            }
        }
        return found
    }

    /// Swift's and C's escapes as the catalogues use them: \n \t \r \0 \" \' \\ and Swift's \u{…}.
    static func unescape(_ literal: String) -> String {
        var result = ""
        var characters = literal.makeIterator()
        while let c = characters.next() {
            guard c == "\\", let e = characters.next() else { result.append(c); continue }
            switch e {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "u":
                var hex = ""
                while let h = characters.next(), h != "}" { if h != "{" { hex.append(h) } }
                if let scalar = UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) { result.unicodeScalars.append(scalar) }
            default: result.append(e)   // \" \' \\ (and \( which sourceMessages reports)
            }
        }
        return result
    }

    /// The texts xgettext finds in the desktop entry and the metainfo.
    static func dataMessages() throws -> Set<String> {
        let directory = try TemporaryDirectory(prefix: "qibla-compass-pot")
        defer { directory.remove() }
        var messages: Set<String> = []
        for (file, language) in [("data/\(appID).desktop", ["--language=Desktop"]), ("data/\(appID).metainfo.xml", [])] {
            let r = try run("xgettext", language + ["--from-code=UTF-8", "--output=\(directory.path)/data.pot", path(file)])
            #expect(r.status == 0, "xgettext \(file): \(r.stderr)")
            messages.formUnion(try catalogue(text: String(contentsOfFile: directory.path + "/data.pot", encoding: .utf8)).keys)
        }
        return messages
    }

    /// The msgid → msgstr pairs of a .po or .pot file (the header and obsolete entries left out).
    static func catalogue(_ relative: String) throws -> [String: String] { try catalogue(text: read(relative)) }

    static func catalogue(text: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        var msgid = "", msgstr = "", inString = false
        func flush() {
            if !msgid.isEmpty { entries[msgid] = msgstr }
            msgid = ""; msgstr = ""
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var text = line
            if line.hasPrefix("msgid ") { flush(); inString = false; text = line.dropFirst(6) }
            else if line.hasPrefix("msgstr ") { inString = true; text = line.dropFirst(7) }
            else if !line.hasPrefix("\"") { if line.isEmpty { flush() }; continue }
            guard text.count >= 2, text.first == "\"", text.last == "\"" else { continue }
            let piece = unescape(String(text.dropFirst().dropLast()))
            if inString { msgstr += piece } else { msgid += piece }
        }
        flush()
        return entries
    }

    @Test func templateHasEveryTranslatableString() throws {
        let messages = try Self.sourceMessages()
        #expect(messages.count > 50, "found only \(messages.count) tr(\"…\") strings in Sources/")
        for (message, file) in messages {
            #expect(!message.contains("\\("), "\(file): tr(\"\(message)\") interpolates; use a {placeholder} and fill(_:_:)")
        }
        let template = try Self.catalogue("po/qibla-compass.pot")
        let missing = Set(messages.map(\.message)).subtracting(template.keys)
        #expect(missing.isEmpty, "not in po/qibla-compass.pot (run make pot; a new file goes into po/POTFILES): \(missing.sorted())")
        // The desktop entry's and the metainfo's texts, as xgettext finds them, are in it too.
        let dataMessages = try Self.dataMessages()
        #expect(dataMessages.count > 10, "\(dataMessages)")
        let missingData = dataMessages.subtracting(template.keys)
        #expect(missingData.isEmpty, "desktop entry or metainfo texts not in po/qibla-compass.pot (run make pot): \(missingData.sorted())")
        let stale = Set(template.keys).subtracting(messages.map(\.message)).subtracting(dataMessages)
        #expect(stale.isEmpty, "in po/qibla-compass.pot but not in the sources (run make pot): \(stale.sorted())")
        // POTFILES lists exactly the files with tr("…") strings.
        let listed = Set(try Self.read("po/POTFILES").split(separator: "\n").map(String.init))
        #expect(listed == Set(messages.map(\.file)), "po/POTFILES: \(listed.sorted()), files with tr: \(Set(messages.map(\.file)).sorted())")
    }

    @Test func translationsCompileAndKeepPlaceholders() throws {
        let template = try Self.catalogue("po/qibla-compass.pot")
        for language in try Self.languages() {
            let result = try run("msgfmt", ["--check", "-o", "/dev/null", Self.path("po/\(language).po")])
            #expect(result.status == 0, "po/\(language).po: \(result.stderr)")
            for (msgid, msgstr) in try Self.catalogue("po/\(language).po") where !msgstr.isEmpty {
                #expect(template[msgid] != nil, "po/\(language).po translates \"\(msgid)\", which the template lacks (msgmerge)")
                let wanted = Set(msgid.matches(of: /\{[a-z]+\}/).map { String($0.0) })
                let given = Set(msgstr.matches(of: /\{[a-z]+\}/).map { String($0.0) })
                #expect(wanted == given, "po/\(language).po: \"\(msgstr)\" has placeholders \(given.sorted()), \"\(msgid)\" \(wanted.sorted())")
            }
        }
    }

    /// The languages most people who ask for the Qibla read first (issue 38), three of them
    /// written right to left.
    static let requiredLanguages = ["ar", "ur", "fa", "bn", "id", "ms", "tr"]

    /// Each of the seven is complete: msgfmt counts every message of the template translated,
    /// none untranslated or fuzzy; each asks native speakers to review it; each writes the
    /// compass points and numbers its own way.
    @Test(arguments: requiredLanguages)
    func aLanguageIsComplete(_ language: String) throws {
        #expect(try Self.languages().contains(language), "po/LINGUAS lacks \(language)")
        let template = try Self.catalogue("po/qibla-compass.pot")
        let result = try run("msgfmt", ["--check", "--statistics", "-o", "/dev/null", Self.path("po/\(language).po")])
        #expect(result.status == 0, "po/\(language).po: \(result.stderr)")
        let statistics = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(statistics == "\(template.count) translated messages.", "po/\(language).po: \(statistics); the template has \(template.count)")
        let catalogue = try Self.catalogue("po/\(language).po")
        #expect(Set(catalogue.keys) == Set(template.keys), "po/\(language).po is not merged with the template (make pot)")
        #expect(try Self.read("po/\(language).po").contains("NATIVE SPEAKERS, PLEASE REVIEW"), "po/\(language).po has no request for review")
        #expect(catalogue["N"] != "N" && catalogue["Turn left {degrees}°"] != "Turn left {degrees}°", "po/\(language).po: \(String(describing: catalogue["N"]))")
        let digits = Array(catalogue["0123456789"] ?? "")
        #expect(digits.count == 10 && digits.allSatisfy(\.isNumber), "po/\(language).po digits: \(digits)")
        #expect(catalogue[".,"]?.count == 2, "po/\(language).po separators: \(String(describing: catalogue[".,"]))")
        let direction = ["ar", "ur", "fa"].contains(language) ? "default:RTL" : "default:LTR"
        #expect(catalogue["default:LTR"] == direction, "po/\(language).po: the direction is \(String(describing: catalogue["default:LTR"]))")
    }

    // MARK: make install

    @Test func installPutsEveryFileInPlaceAndUninstallRemovesThem() throws {
        let binary = product("qibla-compass").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "no \(binary)")
        let root = try TemporaryDirectory(prefix: "qibla-compass-install")
        defer { root.remove() }
        let environment = ["MAKEFLAGS": "", "MFLAGS": ""]
        let variables = ["DESTDIR=\(root.path)", "PREFIX=/usr", "BUILDDIR=\(productsDirectory.path)"]

        let install = try run("make", ["-C", Self.package.path, "install"] + variables, environment: environment)
        #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
        let languages = try Self.languages()
        let expected = ["usr/bin/qibla-compass",
                        "usr/share/applications/\(Self.appID).desktop",
                        "usr/share/metainfo/\(Self.appID).metainfo.xml",
                        "usr/share/icons/hicolor/scalable/apps/\(Self.appID).svg",
                        "usr/share/icons/hicolor/symbolic/apps/\(Self.appID)-symbolic.svg"]
            + languages.map { "usr/share/locale/\($0)/LC_MESSAGES/qibla-compass.mo" }
        for file in expected {
            #expect(FileManager.default.fileExists(atPath: root.path + "/" + file), "make install did not install \(file)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: root.path + "/usr/bin/qibla-compass"))

        // The installed desktop entry and metainfo carry the French texts (msgfmt --desktop, --xml) and stay valid.
        let desktop = root.path + "/usr/share/applications/\(Self.appID).desktop"
        let metainfo = root.path + "/usr/share/metainfo/\(Self.appID).metainfo.xml"
        if languages.contains("fr") {
            let entry = (try? String(contentsOfFile: desktop, encoding: .utf8)) ?? ""
            #expect(entry.contains("Name[fr]=Boussole Qibla") && entry.contains("Comment[fr]=") && entry.contains("Keywords[fr]="), "\(entry)")
            let xml = (try? String(contentsOfFile: metainfo, encoding: .utf8)) ?? ""
            #expect(xml.contains("<summary xml:lang=\"fr\">Trouver la direction de la Kaaba</summary>"), "\(xml)")
        }
        // And those of the seven languages (a name and a summary each).
        let installedEntry = (try? String(contentsOfFile: desktop, encoding: .utf8)) ?? ""
        let installedXML = (try? String(contentsOfFile: metainfo, encoding: .utf8)) ?? ""
        for language in Self.requiredLanguages {
            #expect(installedEntry.contains("Name[\(language)]=") && installedEntry.contains("Keywords[\(language)]="), "no Name[\(language)]: \(installedEntry)")
            #expect(installedXML.contains("<summary xml:lang=\"\(language)\">"), "no summary in \(language)")
        }
        #expect(installedEntry.contains("Name[ar]=بوصلة القبلة"), "\(installedEntry)")
        let validDesktop = try run("desktop-file-validate", [desktop])
        #expect(validDesktop.status == 0 && validDesktop.stdout.isEmpty, "\(validDesktop.stdout)\(validDesktop.stderr)")
        let validMetainfo = try run("appstreamcli", ["validate", "--no-net", metainfo])
        #expect(validMetainfo.status == 0, "\(validMetainfo.stdout)\(validMetainfo.stderr)")

        // The compiled catalogues answer where the app looks (<prefix>/share/locale beside bin/).
        if languages.contains("fr") {
            let lookup = try run("gettext", ["-d", "qibla-compass", "Where are you?"],
                                 environment: ["LANGUAGE": "fr", "LC_ALL": translatedLocale, "TEXTDOMAINDIR": root.path + "/usr/share/locale"])
            #expect(lookup.stdout.hasPrefix("Où êtes-vous"), "gettext fr: \(lookup.stdout) \(lookup.stderr)")
        }

        let uninstall = try run("make", ["-C", Self.package.path, "uninstall"] + variables, environment: environment)
        #expect(uninstall.status == 0, "\(uninstall.stdout)\(uninstall.stderr)")
        for file in expected {
            #expect(!FileManager.default.fileExists(atPath: root.path + "/" + file), "make uninstall left \(file)")
        }
    }

    @Test func installWithoutABinaryFailsAndSaysSo() throws {
        let root = try TemporaryDirectory(prefix: "qibla-compass-install")
        defer { root.remove() }
        let result = try run("make", ["-C", Self.package.path, "install", "DESTDIR=\(root.path)", "PREFIX=/usr",
                                      "BUILDDIR=\(root.path)/nothing"], environment: ["MAKEFLAGS": "", "MFLAGS": ""])
        #expect(result.status != 0)
        #expect(result.stderr.contains("run make"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.path + "/usr/bin/qibla-compass"))
    }
}
