import GATT
import Support
import Testing

/// Date Time 0x2A08 and the embedded time stamp: `docs/gatt-health-devices.md`, "Date Time".
@Suite struct DateTimeTests {
    @Test func specLayout() throws {
        // 2026-12-02 07:30:05: year 0x07EA little-endian, then month, day, hours, minutes, seconds.
        let value = try DateTime(decoding: h("ea 07 0c 02 07 1e 05"))
        #expect(value == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 5))
        #expect(value.isComplete)
        #expect(!value.hasUnknownDate)
        #expect(value.description == "2026-12-02T07:30:05")
        #expect(value.encoded() == h("ea 07 0c 02 07 1e 05"))
    }

    @Test func zeroMeansUnknownAndIsKept() throws {
        // Nordic's blood pressure test sends year 0, April 17 20:41:59.
        let value = try DateTime(decoding: h("00 00 04 11 14 29 3b"))
        #expect(value.year == 0)
        #expect(value.hasUnknownDate)
        #expect(!value.isComplete)
        #expect(value.description == "0000-04-17T20:41:59")
        #expect(try DateTime(decoding: h("00 00 00 00 00 00 00")).hasUnknownDate)
    }

    static let incomplete = [
        "ea 07 0d 01 00 00 00",  // month 13
        "ea 07 02 1e 00 00 00",  // 30 February
        "e9 07 02 1d 00 00 00",  // 29 February 2025
        "ea 07 01 01 18 00 00",  // 24 o'clock
        "ea 07 01 01 00 3c 00",  // minute 60
        "ea 07 01 01 00 00 3c",  // second 60
        "2d 06 01 01 00 00 00",  // 1581, before the range
        "10 27 01 01 00 00 00",  // 10000
        "ea 07 01 20 00 00 00",  // 32 January
        "ea 07 04 1f 00 00 00",  // 31 April
    ]

    @Test(arguments: incomplete)
    func outOfRangeFieldsDecodeButAreNotComplete(_ hex: String) throws {
        // DecodingPolicy.dateTimeValues.
        let value = try DateTime(decoding: h(hex))
        #expect(!value.isComplete)
        #expect(value.encoded() == h(hex))
    }

    @Test func leapDays() throws {
        #expect(try DateTime(decoding: h("e8 07 02 1d 00 00 00")).isComplete)  // 2024
        #expect(try DateTime(decoding: h("d0 07 02 1d 00 00 00")).isComplete)  // 2000
        #expect(!(try DateTime(decoding: h("6c 07 02 1d 00 00 00")).isComplete))  // 1900
        #expect(try DateTime(decoding: h("0f 27 0c 1f 17 3b 3b")).isComplete)  // 9999-12-31 23:59:59
        #expect(try DateTime(decoding: h("2e 06 01 01 00 00 00")).isComplete)  // 1582
    }

    @Test(arguments: [0, 1, 6, 8, 20])
    func fixedSize(_ count: Int) {
        #expect(
            decodeError(DateTime.self, Array(repeating: 1, count: count)) == .invalidLength(expected: 7, actual: count))
    }

    @Test func fieldsShowTheText() throws {
        let value = try DateTime(decoding: h("ea 07 0c 02 07 1e 05"))
        #expect(
            FieldValue.object(value.fields).json
                == #"{"date_time":"2026-12-02T07:30:05","year":2026,"month":12,"day":2,"hours":7,"minutes":30,"#
                + #""seconds":5,"complete":true}"#)
    }
}

extension DateTime: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["ea 07 0c 02 07 1e 05", "00 00 04 11 14 29 3b", "00 00 00 00 00 00 00", "ff ff ff ff ff ff ff"]
    }
    static var fixedLength: Int? { 7 }
    static func random(using rng: inout SplitMix64) -> DateTime {
        // Mostly plausible times, sometimes any bytes (they decode too).
        if rng.bool() {
            return DateTime(
                year: rng.uint16(), month: rng.uint8(), day: rng.uint8(), hours: rng.uint8(), minutes: rng.uint8(),
                seconds: rng.uint8())
        }
        return .plausible(using: &rng)
    }

    static func plausible(using rng: inout SplitMix64) -> DateTime {
        DateTime(
            year: UInt16.random(in: 2000...2040, using: &rng), month: UInt8.random(in: 1...12, using: &rng),
            day: UInt8.random(in: 1...28, using: &rng), hours: UInt8.random(in: 0...23, using: &rng),
            minutes: UInt8.random(in: 0...59, using: &rng), seconds: UInt8.random(in: 0...59, using: &rng))
    }
}
