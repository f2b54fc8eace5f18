// SPDX-License-Identifier: Apache-2.0
@testable import QiblaPlaces
import Testing

/// Towns in the scripts and languages the archive must keep byte for byte: Arabic, Urdu and
/// Turkish names beside GeoNames' own, alternate names, an empty region, a negative longitude.
private let towns = WellKnownNames.adding(to: [
    Place(id: "104515", name: "مكة المكرمة", englishName: "Makkah al Mukarramah", region: "منطقة مكة المكرمة",
          country: "المملكة العربية السعودية", englishRegion: "Mecca Region", englishCountry: "Saudi Arabia", countryCode: "SA",
          population: 1_323_624, latitudeDegrees: 21.42664, longitudeDegrees: 39.82563),
    Place(id: "1172451", name: "لاہور", englishName: "Lahore", region: "پنجاب", country: "پاکستان", englishRegion: "Punjab",
          englishCountry: "Pakistan", countryCode: "PK", population: 6_310_888, latitudeDegrees: 31.558, longitudeDegrees: 74.35071),
    Place(id: "745044", name: "İstanbul", englishName: "Istanbul", region: "İstanbul", country: "Türkiye", englishRegion: "Istanbul",
          englishCountry: "Turkey", countryCode: "TR", population: 14_804_116, latitudeDegrees: 41.01384, longitudeDegrees: 28.94966),
    Place(name: "Birmingham", englishName: "Birmingham", region: "England", country: "United Kingdom", population: 984_333,
          latitudeDegrees: 52.48142, longitudeDegrees: -1.89983),
    Place(name: "Birmingham", englishName: "Birmingham", region: "Alabama", country: "United States of America", population: 212_461,
          latitudeDegrees: 33.52066, longitudeDegrees: -86.80249),
    Place(name: "Singapore", englishName: "Singapore", region: "", country: "Singapore", countryCode: "SG", population: 3_547_809,
          latitudeDegrees: 1.28967, longitudeDegrees: 103.85007),
    Place(name: "São Paulo", englishName: "São Paulo", region: "São Paulo", country: "Brasil", englishCountry: "Brazil",
          population: 10_021_295, latitudeDegrees: -23.5475, longitudeDegrees: -46.63611),
])
private let index = PlaceIndex(places: towns)
private let identity = "library=/usr/lib/libgeonames.so.0\nfile=1:2 3 bytes\nlanguage=ar"
private let queries = ["mecca", "مكة", "مکہ", "makkah", "لاہور", "lahore", "İstanbul", "istanbul", "Kudüs", "birmingham",
                       "birmingham england", "sao paulo", "paulo", "brazil sao", "sing", "x"]

@Suite struct PlaceIndexArchiveTests {
    @Test func roundTripsEveryPlaceAndEverySearch() throws {
        let bytes = PlaceIndexArchive.encode(index, identity: identity)
        #expect(try PlaceIndexArchive.identity(of: bytes) == identity)
        let decoded = try PlaceIndexArchive.decode(bytes, identity: identity)
        #expect(decoded.places == index.places)
        #expect(decoded.text == index.text && decoded.nameStart == index.nameStart && decoded.otherStart == index.otherStart)
        for query in queries {
            #expect(decoded.matches(query, limit: 20) == index.matches(query, limit: 20), "\(query)")
            #expect(decoded.matches(query, limit: 20, near: (33.4, -86.9)) == index.matches(query, limit: 20, near: (33.4, -86.9)))
        }
        #expect(!decoded.matches("مكة").isEmpty && !decoded.matches("İstanbul").isEmpty, "the queries find something")
        // Encoding is deterministic: the same index, the same bytes.
        #expect(PlaceIndexArchive.encode(decoded, identity: identity) == bytes)
    }

    @Test func anEmptyIndexRoundTrips() throws {
        let empty = try PlaceIndexArchive.decode(PlaceIndexArchive.encode(PlaceIndex(places: []), identity: ""), identity: "")
        #expect(empty.places.isEmpty && empty.matches("a").isEmpty)
    }

    @Test func foreignBytesAreRejected() {
        for bytes in [[], Array("QBLTOWN".utf8), Array("<?xml version='1.0'?><towns/>".utf8), [UInt8](repeating: 0, count: 4096)] {
            #expect(throws: PlaceIndexArchive.Rejection.self) { try PlaceIndexArchive.decode(bytes, identity: identity) }
            #expect(kind(bytes) == .foreign, "\(bytes.prefix(8))")
        }
    }

    @Test func anotherVersionIsRejected() {
        var bytes = PlaceIndexArchive.encode(index, identity: identity)
        bytes[8] &+= 1
        #expect(kind(bytes) == .otherVersion)
        #expect(reason(bytes).contains("format version 2"), "\(reason(bytes))")
    }

    @Test func anotherIdentityIsStale() {
        let bytes = PlaceIndexArchive.encode(index, identity: identity)
        #expect(kind(bytes, identity: identity + "\ncatalogue=other") == .stale)
        #expect(reason(bytes, identity: "library=/elsewhere").contains("made from"))
    }

    /// Another build's folding or well-known names (its fingerprint) make the archive stale.
    @Test func anotherFingerprintIsStale() {
        var bytes = PlaceIndexArchive.encode(index, identity: identity)
        let at = fingerprintOffset(bytes)
        bytes[at] ^= 0x01
        #expect(kind(bytes) == .stale)
    }

    /// Every prefix of an archive is rejected (never a crash), as cut short or foreign.
    @Test func everyTruncationIsRejected() {
        let bytes = PlaceIndexArchive.encode(index, identity: identity)
        for length in 0..<bytes.count {
            let k = kind(Array(bytes.prefix(length)))
            #expect(k == .foreign || k == .truncated, "\(length) of \(bytes.count) bytes: \(String(describing: k))")
        }
        var longer = bytes
        longer.append(0)
        #expect(kind(longer) == .corrupt)
    }

    /// Any byte of the payload changed fails the checksum.
    @Test func aFlippedBitIsCaught() {
        let bytes = PlaceIndexArchive.encode(index, identity: identity)
        let payloadStart = fingerprintOffset(bytes) + 24
        for at in stride(from: payloadStart, to: bytes.count, by: 7) {
            var changed = bytes
            changed[at] ^= 0x10
            #expect(reason(changed) == "checksum mismatch", "byte \(at)")
        }
    }

    /// Counts, offsets and string numbers that lie, with a checksum that agrees (a file written
    /// by a broken build): each is caught by the bounds checks, none crashes.
    @Test func liesBehindAGoodChecksumAreCaught() {
        let bytes = PlaceIndexArchive.encode(index, identity: identity)
        let payloadStart = fingerprintOffset(bytes) + 24
        var caught = 0, tried = 0
        for at in stride(from: payloadStart, to: bytes.count - 3, by: 4) {
            for value: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFFF, 1_000_000] {
                var changed = bytes
                withUnsafeBytes(of: value.littleEndian) { for k in 0..<4 { changed[at + k] = $0[k] } }
                guard changed != bytes else { continue }
                resealed(&changed, payloadStart: payloadStart)
                tried += 1
                do {
                    let decoded = try PlaceIndexArchive.decode(changed, identity: identity)
                    // A change that keeps the archive consistent (a population, a byte of a name)
                    // still decodes to places and a searchable index.
                    _ = decoded.matches("birmingham")
                } catch {
                    caught += 1
                    #expect(error.kind == .corrupt || error.kind == .truncated, "\(error)")
                }
            }
        }
        #expect(tried > 300 && caught > tried / 3, "\(caught) of \(tried) caught")
    }

    @Test func rejectionsSayWhy() {
        #expect(reason([1, 2, 3]).contains("not a town archive"))
        var bytes = PlaceIndexArchive.encode(index, identity: identity)
        bytes.removeLast(10)
        #expect(reason(bytes).contains("cut short"), "\(reason(bytes))")
    }
}

private func kind(_ bytes: [UInt8], identity: String = identity) -> PlaceIndexArchive.Rejection.Kind? {
    do { _ = try PlaceIndexArchive.decode(bytes, identity: identity); return nil } catch { return error.kind }
}

private func reason(_ bytes: [UInt8], identity: String = identity) -> String {
    do { _ = try PlaceIndexArchive.decode(bytes, identity: identity); return "" } catch { return error.description }
}

/// Where the content fingerprint starts: after the magic, version, identity length, identity and padding.
private func fingerprintOffset(_ bytes: [UInt8]) -> Int {
    let identityLength = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
    return (16 + identityLength + 7) & ~7
}

/// Writes the payload's checksum anew after a change.
private func resealed(_ bytes: inout [UInt8], payloadStart: Int) {
    let sum = bytes[payloadStart...].withUnsafeBytes { PlaceIndexArchive.checksum($0) }
    withUnsafeBytes(of: sum.littleEndian) { for k in 0..<8 { bytes[payloadStart - 8 + k] = $0[k] } }
}
