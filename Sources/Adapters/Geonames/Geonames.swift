// SPDX-License-Identifier: Apache-2.0
// libgeonames (Lomiri's GeoNames library, Debian's libgeonames0): the only file that uses it.
// Its list — every town of 15,000 people or more from geonames.org's cities15000 (CC BY 4.0),
// 24,361 in version 0.3.0, each with its first-level region, country, time zone, population and
// position — is compiled into the library as a zlib-compressed GResource holding one GVariant of
// type a(sssssssudd): geonameid, name, admin1 code, region, country code, country, time zone,
// population, latitude, longitude (degrees). Its gettext catalogues (domain "geonames",
// libgeonames-common) translate a town by its geonameid, a region by "CC.admin1", a country by "CC".
//
// The library is loaded when the list is first asked for (dlopen, through QiblaPlatform's
// SharedLibrary), not linked: qiblactl's other commands then map neither it nor GLib and GIO
// (BENCHMARKS.md has what linking cost). Loading it registers the resource; GLib's
// g_resources_lookup_data hands back the decompressed variant. The public API (geonames_get_city
// and its getters) answers one town at a time with an allocation per field and gives no English
// name once a catalogue translates it, so the list is read here in one pass over the variant's
// serialized bytes (GVariant's serialisation format, as GLib's gvariant-serialiser.c documents
// it), every offset checked.
import QiblaPlaces
import QiblaPlatform

public enum Geonames {
    /// Why the list could not be read.
    public struct ReadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The resource libgeonames 0.3.0 registers when it is loaded.
    static let resourcePath = "/com/lomiri/geonames/cities.compiled"
    static let textDomain = "geonames"

    /// The library's soname (Debian's libgeonames0).
    static let libraryName = "libgeonames.so.0"

    /// Lets the catalogues follow the user's language (LANGUAGE, LC_ALL, LC_MESSAGES) in a process
    /// that has not called setlocale (qiblactl), names given in UTF-8 whatever the character set.
    public static func useUserLanguage() { Gettext.useUserLanguage(for: textDomain) }

    /// The GLib functions the list is read with, from the loaded library's dependencies.
    private struct GLibCalls {
        typealias LookupData = @convention(c) (UnsafePointer<CChar>, UInt32, UnsafeMutableRawPointer?) -> OpaquePointer?
        typealias BytesData = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int>) -> UnsafeRawPointer?
        typealias BytesUnref = @convention(c) (OpaquePointer) -> Void
        let lookupData: LookupData
        let bytesData: BytesData
        let bytesUnref: BytesUnref

        init(_ library: SharedLibrary) throws(SharedLibrary.LoadError) {
            lookupData = unsafeBitCast(try library.symbol("g_resources_lookup_data"), to: LookupData.self)
            bytesData = unsafeBitCast(try library.symbol("g_bytes_get_data"), to: BytesData.self)
            bytesUnref = unsafeBitCast(try library.symbol("g_bytes_unref"), to: BytesUnref.self)
        }
    }

    /// Every town of the list, names in the user's language where the catalogue has them (the
    /// process's LC_MESSAGES: call setlocale or ``useUserLanguage()`` first), with GeoNames' own
    /// names beside them and ``WellKnownNames`` added. Loads libgeonames at the first call.
    public static func towns() throws(ReadError) -> [Place] { try readList().towns }

    /// ``towns()``, and the library file they were read from as the kernel names it (nil when it
    /// cannot be told): what ``TownCache`` keys its file by.
    static func readList() throws(ReadError) -> (towns: [Place], libraryPath: String?) {
        let glib: GLibCalls
        let libraryPath: String?
        do {
            let library = try SharedLibrary(libraryName)
            // The library it claims to be, and where it was found.
            libraryPath = SharedLibrary.path(containing: try library.symbol("geonames_get_n_cities"))
            glib = try GLibCalls(library)
        } catch {
            throw ReadError(description: "cannot load libgeonames (Debian's libgeonames0): \(error.description)")
        }
        // G_RESOURCE_LOOKUP_FLAGS_NONE; no GError asked for (its absence is the message).
        guard let bytes = glib.lookupData(resourcePath, 0, nil) else {
            throw ReadError(description: "libgeonames has no \(resourcePath): a version other than 0.3.0?")
        }
        defer { glib.bytesUnref(bytes) }
        var size = 0
        guard let data = glib.bytesData(bytes, &size), size > 0 else { throw ReadError(description: "libgeonames' list is empty") }
        let raw = UnsafeRawBufferPointer(start: data, count: size)
        guard Gettext.hasCatalogue(textDomain) else {
            return (WellKnownNames.adding(to: try parse(raw) { key in key.english }), libraryPath)
        }
        var translations = Translations()
        return (WellKnownNames.adding(to: try parse(raw) { translations.text(for: $0) }), libraryPath)
    }

    /// gettext's answers for the codes of regions and countries, asked once per code.
    private struct Translations {
        var cache: [String: String] = [:]

        mutating func text(for key: Key) -> String {
            switch key {
            case .town(let id, let english): return lookup(id) ?? english
            case .other(let code, let english):
                if let known = cache[code] { return known.isEmpty ? english : known }
                let translated = lookup(code)
                cache[code] = translated ?? ""
                return translated ?? english
            }
        }

        /// The catalogue's text for `msgid`, nil when it has none.
        private func lookup(_ msgid: String) -> String? { Gettext.translation(msgid, domain: Geonames.textDomain) }
    }

    enum Key {
        case town(id: String, english: String)
        case other(code: String, english: String)

        var english: String {
            switch self {
            case .town(_, let english), .other(_, let english): english
            }
        }
    }

    /// The towns of an a(sssssssudd) variant's serialized bytes (native byte order), names passed
    /// through `translate`.
    static func parse(_ raw: UnsafeRawBufferPointer, translate: (Key) -> String) throws(ReadError) -> [Place] {
        let size = raw.count
        func offsetSize(_ containerSize: Int) -> Int { containerSize <= 0xFF ? 1 : containerSize <= 0xFFFF ? 2 : containerSize <= 0xFFFF_FFFF ? 4 : 8 }
        func offset(at position: Int, width: Int) -> Int {
            switch width {
            case 1: Int(raw[position])
            case 2: Int(raw.loadUnaligned(fromByteOffset: position, as: UInt16.self))
            case 4: Int(raw.loadUnaligned(fromByteOffset: position, as: UInt32.self))
            default: Int(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            }
        }
        let bad = ReadError(description: "libgeonames' list is not an a(sssssssudd) variant as version 0.3.0's")
        let arrayWidth = offsetSize(size)
        guard size >= arrayWidth else { throw bad }
        let framing = offset(at: size - arrayWidth, width: arrayWidth)
        guard framing <= size, (size - framing) % arrayWidth == 0 else { throw bad }
        let count = (size - framing) / arrayWidth
        var places: [Place] = []
        places.reserveCapacity(count)
        var previousEnd = 0
        for i in 0..<count {
            let start = (previousEnd + 7) & ~7, end = offset(at: framing + i * arrayWidth, width: arrayWidth)
            guard start <= end, end <= framing else { throw bad }
            previousEnd = end
            // The tuple: seven strings whose ends are framing offsets at the tuple's end (the first
            // string's last), then u at a multiple of 4 and two d at multiples of 8.
            let tupleSize = end - start, width = offsetSize(tupleSize)
            guard tupleSize >= 7 * width + 20 else { throw bad }
            let tupleFraming = end - 7 * width
            // The strings' byte ranges (the time zone, the seventh, is not read).
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(7)
            var stringStart = 0
            for k in 0..<7 {
                let stringEnd = offset(at: end - (k + 1) * width, width: width)
                guard stringStart < stringEnd, start + stringEnd <= tupleFraming, raw[start + stringEnd - 1] == 0 else { throw bad }
                ranges.append((start + stringStart)..<(start + stringEnd - 1))
                stringStart = stringEnd
            }
            func string(_ k: Int) -> String { String(decoding: UnsafeRawBufferPointer(rebasing: raw[ranges[k]]), as: UTF8.self) }
            let populationAt = (stringStart + 3) & ~3, latitudeAt = (populationAt + 4 + 7) & ~7
            guard start + latitudeAt + 16 <= tupleFraming else { throw bad }
            let population = raw.loadUnaligned(fromByteOffset: start + populationAt, as: UInt32.self)
            let latitude = raw.loadUnaligned(fromByteOffset: start + latitudeAt, as: Double.self)
            let longitude = raw.loadUnaligned(fromByteOffset: start + latitudeAt + 8, as: Double.self)
            guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { throw bad }
            let id = string(0), name = string(1), admin1 = string(2), region = string(3), countryCode = string(4), country = string(5)
            places.append(Place(
                id: id, name: translate(.town(id: id, english: name)), englishName: name,
                region: region.isEmpty ? "" : translate(.other(code: "\(countryCode).\(admin1)", english: region)),
                country: translate(.other(code: countryCode, english: country)),
                englishRegion: region, englishCountry: country, countryCode: countryCode, population: Int(population),
                latitudeDegrees: latitude, longitudeDegrees: longitude))
        }
        return places
    }
}
