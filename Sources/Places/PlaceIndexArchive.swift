// SPDX-License-Identifier: Apache-2.0

/// A ``PlaceIndex`` as bytes, so a process after the first loads the towns and their folded
/// names instead of reading libgeonames and folding 24,361 towns again (issue 38: each
/// keystroke's answer, the first included, within 20 ms; BENCHMARKS.md). Pure: the adapter
/// (QiblaGeonames' `TownCache`) reads and writes the file and says what the bytes were made from.
///
/// The format, all integers little-endian:
///
///     magic "QBLTOWNS" (8 bytes), format version (u32), identity length (u32), identity (UTF-8),
///     zero padding to a multiple of 8, content fingerprint (u64), payload length (u64),
///     payload checksum (u64), payload:
///       counts (u32 each): places, strings, string bytes, alternate names, text bytes
///       string ends ((strings) × u32, each the end of string i in the string bytes)
///       string bytes (UTF-8; the distinct strings of every place, each once)
///       places (places × 64 bytes): id, name, English name, region, country, English region,
///         English country, country code (u32 string numbers), first alternate name, alternate
///         name count (u32), population (i64), latitude, longitude (f64, degrees)
///       alternate names (u32 string numbers)
///       the index's folded text (text bytes), then its name starts ((places + 1) × u32) and its
///         region starts (places × u32)
///
/// The identity is the adapter's text naming what the towns were read from (the library file, the
/// catalogue); an archive of another identity is stale. The content fingerprint covers what this
/// build adds to the source's list (``WellKnownNames``) and how it folds text (``SearchText``):
/// an archive written by a build that folds or names otherwise is stale too. Every count, offset
/// and string number is checked against the bytes there are before it is used; the checksum
/// catches the rest. Decoding gives back the very index that was encoded (its places equal, its
/// searches the same).
public enum PlaceIndexArchive {
    /// Bumped whenever the layout, or what the towns are read as (QiblaGeonames' reading of
    /// libgeonames), changes.
    public static let formatVersion: UInt32 = 1
    static let magic: [UInt8] = Array("QBLTOWNS".utf8)

    /// Why an archive's bytes were not taken: each names what was wrong.
    public struct Rejection: Error, CustomStringConvertible, Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// Not this format, or too short to say.
            case foreign
            /// This format, another version of it.
            case otherVersion
            /// Made from another library, catalogue or build (its identity or fingerprint differs).
            case stale
            /// Cut short, or bytes that do not add up.
            case truncated
            case corrupt
        }
        public let kind: Kind
        public let description: String
    }

    /// The bytes of `index`, made from the source `identity` names.
    public static func encode(_ index: PlaceIndex, identity: String) -> [UInt8] {
        var strings: [String] = [], numbers: [UTF8Key: UInt32] = [:]
        numbers.reserveCapacity(index.places.count * 3)
        func number(_ s: String) -> UInt32 {
            let key = UTF8Key(string: s)
            if let n = numbers[key] { return n }
            let n = UInt32(strings.count)
            strings.append(s)
            numbers[key] = n
            return n
        }
        var records: [UInt8] = [], alternates: [UInt32] = []
        records.reserveCapacity(index.places.count * placeRecordBytes)
        for place in index.places {
            records.appendLittleEndian(number(place.id)); records.appendLittleEndian(number(place.name))
            records.appendLittleEndian(number(place.englishName)); records.appendLittleEndian(number(place.region))
            records.appendLittleEndian(number(place.country)); records.appendLittleEndian(number(place.englishRegion))
            records.appendLittleEndian(number(place.englishCountry)); records.appendLittleEndian(number(place.countryCode))
            records.appendLittleEndian(UInt32(alternates.count))
            records.appendLittleEndian(UInt32(place.alternateNames.count))
            alternates += place.alternateNames.map(number)
            records.appendLittleEndian(UInt64(bitPattern: Int64(place.population)))
            records.appendLittleEndian(place.latitudeDegrees.bitPattern)
            records.appendLittleEndian(place.longitudeDegrees.bitPattern)
        }
        var stringBytes: [UInt8] = [], stringEnds: [UInt32] = []
        for s in strings {
            stringBytes += s.utf8
            stringEnds.append(UInt32(stringBytes.count))
        }
        var payload: [UInt8] = []
        for count in [index.places.count, strings.count, stringBytes.count, alternates.count, index.text.count] {
            payload.appendLittleEndian(UInt32(count))
        }
        for end in stringEnds { payload.appendLittleEndian(end) }
        payload += stringBytes
        payload += records
        for a in alternates { payload.appendLittleEndian(a) }
        payload += index.text
        for start in index.nameStart { payload.appendLittleEndian(UInt32(bitPattern: start)) }
        for start in index.otherStart { payload.appendLittleEndian(UInt32(bitPattern: start)) }

        var bytes = magic
        bytes.appendLittleEndian(formatVersion)
        let identityBytes = Array(identity.utf8)
        bytes.appendLittleEndian(UInt32(identityBytes.count))
        bytes += identityBytes
        while bytes.count % 8 != 0 { bytes.append(0) }
        bytes.appendLittleEndian(contentFingerprint)
        bytes.appendLittleEndian(UInt64(payload.count))
        bytes.appendLittleEndian(payload.withUnsafeBytes(checksum))
        bytes += payload
        return bytes
    }

    /// The identity an archive's header names (the payload is not looked at).
    public static func identity(of bytes: [UInt8]) throws(Rejection) -> String {
        try bytes.withUnsafeBytes { raw in Result { () throws(Rejection) in try header(raw).identity } }.get()
    }

    /// The index in `bytes`, if they are an archive of this version made from `identity` by a
    /// build that folds and names as this one, whole and consistent.
    public static func decode(_ bytes: [UInt8], identity: String) throws(Rejection) -> PlaceIndex {
        try bytes.withUnsafeBytes { raw in Result { () throws(Rejection) in try decode(raw, identity: identity) } }.get()
    }

    private static func decode(_ raw: UnsafeRawBufferPointer, identity: String) throws(Rejection) -> PlaceIndex {
        let header = try header(raw)
        guard header.identity == identity else {
            throw Rejection(kind: .stale, description: "stale: made from \(header.identity.debugDescription), not \(identity.debugDescription)")
        }
        guard header.fingerprint == contentFingerprint else {
            throw Rejection(kind: .stale, description: "stale: made by a build that folds names or adds well-known names otherwise")
        }
        let payload = UnsafeRawBufferPointer(rebasing: raw[header.payloadStart...])
        guard payload.count >= header.payloadBytes else {
            throw Rejection(kind: .truncated, description: "cut short: \(payload.count) of \(header.payloadBytes) payload bytes")
        }
        guard payload.count == header.payloadBytes else {
            throw Rejection(kind: .corrupt, description: "\(payload.count - header.payloadBytes) bytes after the payload")
        }
        guard checksum(payload) == header.checksum else { throw Rejection(kind: .corrupt, description: "checksum mismatch") }
        return try decodePayload(payload)
    }

    static let placeRecordBytes = 64

    /// A string compared and hashed by its UTF-8 bytes: strings that are the same text in other
    /// Unicode normal forms stay apart (decoding gives back the very bytes), and hashing skips the
    /// normalisation `String`'s own hash does for non-ASCII text (most of an Arabic list).
    private struct UTF8Key: Hashable {
        let string: String
        func hash(into hasher: inout Hasher) {
            var s = string
            s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
        static func == (a: UTF8Key, b: UTF8Key) -> Bool {
            var x = a.string, y = b.string
            return x.withUTF8 { p in y.withUTF8 { q in p.count == q.count && p.elementsEqual(q) } }
        }
    }

    private struct Header {
        var identity: String
        var fingerprint: UInt64
        var payloadBytes: Int
        var checksum: UInt64
        var payloadStart: Int
    }

    private static func header(_ raw: UnsafeRawBufferPointer) throws(Rejection) -> Header {
        guard raw.count >= 16, raw.prefix(8).elementsEqual(magic) else {
            throw Rejection(kind: .foreign, description: "not a town archive (no \"QBLTOWNS\" at its start)")
        }
        var reader = Reader(raw)
        reader.position = 8
        let version = try reader.u32()
        guard version == formatVersion else {
            throw Rejection(kind: .otherVersion, description: "format version \(version), this build reads \(formatVersion)")
        }
        let identityBytes = try reader.bytes(Int(try reader.u32()))
        reader.position = (reader.position + 7) & ~7
        let fingerprint = try reader.u64(), payloadBytes = try reader.u64(), checksum = try reader.u64()
        guard payloadBytes <= UInt64(Int32.max) else { throw Rejection(kind: .corrupt, description: "a payload of \(payloadBytes) bytes") }
        return Header(identity: String(decoding: identityBytes, as: UTF8.self), fingerprint: fingerprint,
                      payloadBytes: Int(payloadBytes), checksum: checksum, payloadStart: reader.position)
    }

    private static func decodePayload(_ raw: UnsafeRawBufferPointer) throws(Rejection) -> PlaceIndex {
        var r = Reader(raw)
        let placeCount = Int(try r.u32()), stringCount = Int(try r.u32()), stringByteCount = Int(try r.u32())
        let alternateCount = Int(try r.u32()), textCount = Int(try r.u32())
        // The sizes the counts claim, checked before anything is allocated for them.
        let claimed = stringCount * 4 + stringByteCount + placeCount * placeRecordBytes + alternateCount * 4 + textCount + (2 * placeCount + 1) * 4
        guard claimed == r.remaining else {
            throw Rejection(kind: .corrupt, description: "counts claim \(claimed) bytes, the payload holds \(r.remaining)")
        }
        let ends = try r.bytes(stringCount * 4), stringBytes = try r.bytes(stringByteCount)
        var strings: [String] = []
        strings.reserveCapacity(stringCount)
        var start = 0
        for i in 0..<stringCount {
            let end = Int(ends.loadLittleEndianU32(at: i * 4))
            guard start <= end, end <= stringByteCount else { throw Rejection(kind: .corrupt, description: "string \(i) ends out of order") }
            strings.append(String(decoding: UnsafeRawBufferPointer(rebasing: stringBytes[start..<end]), as: UTF8.self))
            start = end
        }
        let records = try r.bytes(placeCount * placeRecordBytes), alternateNumbers = try r.bytes(alternateCount * 4)
        func string(_ n: UInt32, _ what: @autoclosure () -> String) throws(Rejection) -> String {
            guard Int(n) < stringCount else { throw Rejection(kind: .corrupt, description: "\(what()) names string \(n) of \(stringCount)") }
            return strings[Int(n)]
        }
        var places: [Place] = []
        places.reserveCapacity(placeCount)
        for i in 0..<placeCount {
            let at = i * placeRecordBytes
            func field(_ k: Int) throws(Rejection) -> String { try string(records.loadLittleEndianU32(at: at + 4 * k), "town \(i)") }
            let first = Int(records.loadLittleEndianU32(at: at + 32)), count = Int(records.loadLittleEndianU32(at: at + 36))
            guard first <= alternateCount, count <= alternateCount - first else {
                throw Rejection(kind: .corrupt, description: "town \(i)'s other names lie outside the list")
            }
            var alternates: [String] = []
            if count > 0 {
                alternates.reserveCapacity(count)
                for k in first..<(first + count) { alternates.append(try string(alternateNumbers.loadLittleEndianU32(at: 4 * k), "town \(i)")) }
            }
            let latitude = Double(bitPattern: records.loadLittleEndianU64(at: at + 48))
            let longitude = Double(bitPattern: records.loadLittleEndianU64(at: at + 56))
            guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
                throw Rejection(kind: .corrupt, description: "town \(i) lies at \(latitude), \(longitude)")
            }
            places.append(Place(id: try field(0), name: try field(1), englishName: try field(2), alternateNames: alternates,
                                region: try field(3), country: try field(4), englishRegion: try field(5), englishCountry: try field(6),
                                countryCode: try field(7),
                                population: Int(Int64(bitPattern: records.loadLittleEndianU64(at: at + 40))),
                                latitudeDegrees: latitude, longitudeDegrees: longitude))
        }
        let text = Array(try r.bytes(textCount))
        let nameBytes = try r.bytes((placeCount + 1) * 4), otherBytes = try r.bytes(placeCount * 4)
        var nameStart: [Int32] = [], otherStart: [Int32] = []
        nameStart.reserveCapacity(placeCount + 1); otherStart.reserveCapacity(placeCount)
        var previous = 0
        for i in 0...placeCount {
            let n = Int(nameBytes.loadLittleEndianU32(at: 4 * i))
            guard n >= previous, n <= textCount else { throw Rejection(kind: .corrupt, description: "town \(i)'s folded names out of order") }
            if i < placeCount {
                let o = Int(otherBytes.loadLittleEndianU32(at: 4 * i))
                guard o >= n, o <= textCount else { throw Rejection(kind: .corrupt, description: "town \(i)'s folded regions out of order") }
                otherStart.append(Int32(o))
            }
            nameStart.append(Int32(n))
            previous = n
        }
        for i in 0..<placeCount where Int(otherStart[i]) > Int(nameStart[i + 1]) {
            throw Rejection(kind: .corrupt, description: "town \(i)'s folded regions run into the next town")
        }
        guard nameStart[placeCount] == Int32(textCount) else { throw Rejection(kind: .corrupt, description: "folded text left over") }
        return PlaceIndex(places: places, text: text, nameStart: nameStart, otherStart: otherStart)
    }

    /// Bounds-checked little-endian reads.
    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var position = 0
        init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }
        var remaining: Int { raw.count - position }

        mutating func bytes(_ count: Int) throws(Rejection) -> UnsafeRawBufferPointer {
            guard count >= 0, count <= remaining else {
                throw Rejection(kind: .truncated, description: "cut short: \(count) bytes wanted at \(position), \(max(remaining, 0)) left")
            }
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: raw[position..<(position + count)])
        }
        mutating func u32() throws(Rejection) -> UInt32 { try bytes(4).loadLittleEndianU32(at: 0) }
        mutating func u64() throws(Rejection) -> UInt64 { try bytes(8).loadLittleEndianU64(at: 0) }
    }

    /// A 64-bit checksum of `bytes`: four lanes of xxHash64's round (prime multiply, rotate) over
    /// 8-byte words, the rest byte by byte, mixed as xxHash64 finishes. Catches a flipped bit or a
    /// torn write; not a defence against someone who means harm (the file is the user's own).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let p1: UInt64 = 0x9E37_79B1_85EB_CA87, p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F, p3: UInt64 = 0x1656_67B1_9E37_79F9
        func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
            let a = acc &+ input &* p2
            return ((a << 31) | (a >> 33)) &* p1
        }
        var v1 = p1 &+ p2, v2 = p2, v3: UInt64 = 0, v4 = 0 &- p1
        var i = 0
        let n = bytes.count
        while i + 32 <= n {
            v1 = round(v1, bytes.loadLittleEndianU64(at: i)); v2 = round(v2, bytes.loadLittleEndianU64(at: i + 8))
            v3 = round(v3, bytes.loadLittleEndianU64(at: i + 16)); v4 = round(v4, bytes.loadLittleEndianU64(at: i + 24))
            i += 32
        }
        // Four rotations summed in steps (one expression was too much for Swift 6.0's type checker).
        let r1: UInt64 = (v1 << 1) | (v1 >> 63), r2: UInt64 = (v2 << 7) | (v2 >> 57)
        let r3: UInt64 = (v3 << 12) | (v3 >> 52), r4: UInt64 = (v4 << 18) | (v4 >> 46)
        var h: UInt64 = r1 &+ r2
        h = h &+ r3
        h = h &+ r4
        h = h &+ UInt64(n)
        while i < n {
            h = (h ^ (UInt64(bytes[i]) &* p3)) &* p1
            h = (h << 11) | (h >> 53)
            i += 1
        }
        h ^= h >> 33; h = h &* p2; h ^= h >> 29; h = h &* p3; h ^= h >> 32
        return h
    }

    /// What this build adds to and makes of the source's names, as a number: the format version,
    /// ``WellKnownNames``, ``SearchText``'s table of letters, and how it folds a line of probes
    /// that exercise each of its rules. Computed once.
    public static let contentFingerprint: UInt64 = {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(formatVersion)
        for (id, names) in WellKnownNames.byGeonameID.sorted(by: { $0.key < $1.key }) {
            bytes += id.utf8; bytes.append(0)
            for name in names { bytes += name.utf8; bytes.append(0) }
            bytes.append(1)
        }
        for (letter, plain) in SearchText.foldedLetters.sorted(by: { $0.key < $1.key }) {
            bytes.appendLittleEndian(letter); bytes += plain.utf8; bytes.append(0)
        }
        let probes = "İstanbul São-Paulo ŁÓDŹ Straße Æble  Ørsted 'Amman' ıI مكّة المكرمة أإآٱ ة ى ی ک ہ ۃ ـ Ёлка Стамбул ঢাকা 123 ١٢٣ x–y"
        SearchText.append(folded: probes, to: &bytes)
        return bytes.withUnsafeBytes(checksum)
    }()
}

extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt32) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
    mutating func appendLittleEndian(_ value: UInt64) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
}

extension UnsafeRawBufferPointer {
    /// The caller has checked that `offset + 4` (or `+ 8`) lies within the buffer.
    func loadLittleEndianU32(at offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    func loadLittleEndianU64(at offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}
