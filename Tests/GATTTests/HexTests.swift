import GATT
import Support
import TestSupport
import Testing

/// ``Hex``: the text form of values on the command line, in traces and in vectors.
@Suite struct HexTests {
    static let accepted: [(String, [UInt8])] = [
        ("163c1104", [0x16, 0x3C, 0x11, 0x04]),
        ("16 3c 11 04", [0x16, 0x3C, 0x11, 0x04]),
        ("16:3c:11:04", [0x16, 0x3C, 0x11, 0x04]),
        ("16-3c-11-04", [0x16, 0x3C, 0x11, 0x04]),
        ("16,3c,11,04", [0x16, 0x3C, 0x11, 0x04]),
        ("16\t3c", [0x16, 0x3C]),
        ("0x163C1104", [0x16, 0x3C, 0x11, 0x04]),
        ("0X163c1104", [0x16, 0x3C, 0x11, 0x04]),
        ("ABCDEF", [0xAB, 0xCD, 0xEF]),
        ("  16  3c  ", [0x16, 0x3C]),  // separators at the ends and repeated
        ("16 ,: 3c", [0x16, 0x3C]),
        ("", []),
        ("   ", []),
        ("00", [0x00]),
        ("0x00", [0x00]),
        ("0x16 0x3c", [0x16, 0x3C]),  // each group may start with 0x (C array style)
        ("0x16, 0x3C, 0x11", [0x16, 0x3C, 0x11]),
        ("ff", [0xFF]),
    ]

    @Test(arguments: accepted)
    func parses(_ text: String, _ bytes: [UInt8]) throws {
        #expect(try Hex.bytes(text) == bytes)
    }

    static let rejected: [(String, Int)] = [
        ("163", 2),  // odd number of digits: the offset of the lone digit
        ("1", 0),
        ("16 3", 3),
        ("16 3c 1", 6),
        ("0x163", 4),  // offsets count the 0x prefix
        ("1 63", 1),  // a separator inside a byte: the separator's offset
        ("16 3 c", 4),
        ("16zz", 2),  // not a hex digit
        ("g0", 0),
        ("16 3c 1g", 7),
        ("0x16g0", 4),
        ("16.3c", 2),
        ("16_3c", 2),
        ("00x1", 2),  // 0x only in front of a group
        ("1x", 1),
        ("1é", 1),
    ]

    @Test(arguments: rejected)
    func rejects(_ text: String, _ offset: Int) {
        let error = #expect(throws: Hex.ParseError.self) { try Hex.bytes(text) }
        #expect(error?.offset == offset)
    }

    @Test func errorReasons() throws {
        let odd = try #require(parseError("163"))
        #expect(odd.reason == "odd number of hex digits")
        #expect(odd.description == "invalid hex at character 3: odd number of hex digits")
        let split = try #require(parseError("1 63"))
        #expect(split.reason == "separator inside a byte (odd digit at character 1)")
        let bad = try #require(parseError("16zz"))
        #expect(bad.reason == "'z' is not a hex digit")
        #expect(bad.description == "invalid hex at character 3: 'z' is not a hex digit")
    }

    @Test func stringIsLowerCaseWithoutSeparators() {
        #expect(Hex.string([0x16, 0x3C, 0x11, 0x04]) == "163c1104")
        #expect(Hex.string([0x00, 0x0A, 0xFF]) == "000aff")
        #expect(Hex.string([UInt8]()) == "")
        #expect(Hex.string([0xAB][...]) == "ab")
    }

    @Test func roundTrip() throws {
        var rng = SplitMix64(seed: 0xBEEF)
        for _ in 0..<1_000 {
            let bytes = rng.bytes(count: Int.random(in: 0...40, using: &rng))
            let text = Hex.string(bytes)
            #expect(text.count == 2 * bytes.count)
            #expect(try Hex.bytes(text) == bytes)
            #expect(try Hex.bytes(text.uppercased()) == bytes)
            #expect(try Hex.bytes(spaced(bytes)) == bytes)
        }
    }

    private func parseError(_ text: String) -> Hex.ParseError? {
        do throws(Hex.ParseError) {
            _ = try Hex.bytes(text)
            return nil
        } catch {
            return error
        }
    }
}
