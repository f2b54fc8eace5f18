// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import TestSupport

/// qiblactl's words for people in the seven languages of issue 38 (po/, gettext domain qiblactl):
/// complete, asking native speakers to review, keeping the placeholders, and used.
@Suite struct QiblactlLanguagesTests {
    static let languages = ["ar", "ur", "fa", "bn", "id", "ms", "tr"]
    static func path(_ relative: String) -> String {
        relative.hasPrefix("/") ? relative : repositoryRoot.appendingPathComponent(relative).path
    }

    /// The msgid → msgstr pairs of a .po or .pot file (the header left out), continued lines joined.
    static func catalogue(_ relative: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        var msgid = "", msgstr = "", inString = false
        func flush() {
            if !msgid.isEmpty { entries[msgid] = msgstr }
            msgid = ""; msgstr = ""
        }
        for line in try String(contentsOfFile: path(relative), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            var text = line
            if line.hasPrefix("msgid ") { flush(); inString = false; text = line.dropFirst(6) }
            else if line.hasPrefix("msgstr ") { inString = true; text = line.dropFirst(7) }
            else if !line.hasPrefix("\"") { if line.isEmpty { flush() }; continue }
            guard text.count >= 2, text.first == "\"", text.last == "\"" else { continue }
            let piece = String(text.dropFirst().dropLast())
            if inString { msgstr += piece } else { msgid += piece }
        }
        flush()
        return entries
    }

    /// The template holds every tr("…") of the files in po/POTFILES (po/update-pot.sh is run).
    @Test func theTemplateIsUpToDate() throws {
        let directory = try TemporaryDirectory(prefix: "qiblactl-pot")
        defer { directory.remove() }
        let r = try run("xgettext", ["--language=C", "--keyword=tr", "--from-code=UTF-8", "--directory=\(repositoryRoot.path)",
                                     "--files-from=\(Self.path("po/POTFILES"))", "--output=\(directory.path)/new.pot"])
        #expect(r.status == 0, "\(r.stderr)")
        let fresh = try Self.catalogue(directory.path + "/new.pot").keys
        let template = Set(try Self.catalogue("po/qiblactl.pot").keys)
        #expect(fresh.count > 30 && Set(fresh) == template, "run po/update-pot.sh: \(Set(fresh).symmetricDifference(template).sorted())")
    }

    @Test(arguments: languages)
    func aLanguageIsComplete(_ language: String) throws {
        let template = try Self.catalogue("po/qiblactl.pot")
        let result = try run("msgfmt", ["--check", "--statistics", "-o", "/dev/null", Self.path("po/\(language).po")])
        #expect(result.status == 0, "po/\(language).po: \(result.stderr)")
        #expect(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == "\(template.count) translated messages.",
                "po/\(language).po: \(result.stderr); the template has \(template.count)")
        #expect(try String(contentsOfFile: Self.path("po/\(language).po"), encoding: .utf8).contains("NATIVE SPEAKERS, PLEASE REVIEW"))
        for (msgid, msgstr) in try Self.catalogue("po/\(language).po") {
            let wanted = Set(msgid.matches(of: /\{[a-z]+\}/).map { String($0.0) })
            let given = Set(msgstr.matches(of: /\{[a-z]+\}/).map { String($0.0) })
            #expect(wanted == given, "po/\(language).po: \"\(msgstr)\" has \(given.sorted()), \"\(msgid)\" \(wanted.sorted())")
        }
    }

    /// A locale directory with `languages` compiled from po/ (msgfmt), as `make install` lays it out.
    static func compiledCatalogues(_ languages: [String]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "qiblactl-locale")
        for language in languages {
            try FileManager.default.createDirectory(atPath: directory.path + "/\(language)/LC_MESSAGES", withIntermediateDirectories: true)
            let compiled = try run("msgfmt", ["-o", directory.path + "/\(language)/LC_MESSAGES/qiblactl.mo", path("po/\(language).po")])
            #expect(compiled.status == 0, "\(compiled.stderr)")
        }
        return directory
    }

    /// `qiblactl qibla` in Arabic from the compiled catalogue; JSON stays English.
    @Test func qiblaInArabic() throws {
        let directory = try Self.compiledCatalogues(["ar"])
        defer { directory.remove() }
        let environment = ["LANGUAGE": "ar", "LC_ALL": translatedLocale, "QIBLACTL_LOCALEDIR": directory.path]
        let r = try run(product("qiblactl").path, ["qibla", "51.5074", "-0.1278"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("القبلة من 51.5074، -0.1278:") && r.stdout.contains("ق ج ق"), "\(r.stdout)")
        let json = try run(product("qiblactl").path, ["qibla", "51.5074", "-0.1278", "--json"], environment: environment)
        #expect(json.stdout.contains("\"compass_point\": \"ESE\""), "\(json.stdout)")
    }

    /// The help texts (swift-argument-parser's, built after the catalogues are bound) in a
    /// right-to-left and a left-to-right language: the command's abstract, a subcommand's
    /// discussion and an option's help; English without a language.
    @Test(arguments: [
        ("ar", "اسأل qiblad عن القبلة، أو احسبها هنا.", "مرتين في السنة تتعامد الشمس على الكعبة", "مع --check: الاحتفاظ بالخطأ تصحيحًا للاتجاه."),
        ("tr", "Kıbleyi qiblad'a sor ya da burada hesapla.", "Yılda iki kez güneş tam Kâbe'nin üzerinde durur", "--check ile: hatayı yön düzeltmesi olarak sakla."),
    ])
    func helpInALanguage(_ language: String, abstract: String, discussion: String, storeHelp: String) throws {
        let directory = try Self.compiledCatalogues([language])
        defer { directory.remove() }
        // The help wraps long lines: compare with the line breaks and indentation taken out.
        func help(_ arguments: [String], language: String) throws -> String {
            let r = try run(product("qiblactl").path, arguments,
                            environment: ["LANGUAGE": language, "LC_ALL": translatedLocale, "QIBLACTL_LOCALEDIR": directory.path])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let top = try help(["--help"], language: language)
        #expect(top.contains(abstract) && !top.contains("Ask qiblad for the Qibla"), "\(top)")
        let sun = try help(["sun", "--help"], language: language)
        #expect(sun.contains(discussion) && sun.contains(storeHelp) && !sun.contains("keep the error as the heading correction"), "\(sun)")
        let english = try help(["sun", "--help"], language: "")
        #expect(english.contains("Twice a year the sun stands over the Kaaba") && english.contains("With --check: keep the error as the heading correction."),
                "\(english)")
    }
}
