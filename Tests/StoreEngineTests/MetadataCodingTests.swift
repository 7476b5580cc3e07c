import Foundation
import StoreEngine
import Support
import TestSupport
import Testing

@testable import Health

/// Stored metadata text: valid JSON with sorted keys, reading back to the same values, written as
/// `JSONSerialization` wrote it for the metadata the gateway writes.
@Suite struct MetadataCodingTests {
    @Test func randomMetadataRoundTripsThroughValidJSON() throws {
        var random = SplitMix64(seed: 0x4D45_5441)
        let texts = ["", "Europe/Berlin", "a\"quote", "back\\slash", "tab\tnew\nline\u{1}", "ünïcødé ❤️", "/"]
        for _ in 0..<2_000 {
            var metadata: [String: MetadataValue] = [:]
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let key = texts.randomElement(using: &random)! + String(Int.random(in: 0..<50, using: &random))
                let number: Double = [
                    Double(Int.random(in: -1_000...1_000, using: &random)),
                    Double.random(in: -1e6...1e6, using: &random), 1e-7, 2.5e20, 0.1,
                ].randomElement(using: &random)!
                metadata[key] =
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: .string(texts.randomElement(using: &random)!)
                    case 1: .number(number)
                    case 2: .bool(Bool.random(using: &random))
                    case 3:
                        .date(Instant(milliseconds: Int64.random(in: -1_000_000...2_000_000_000_000, using: &random)))
                    default: .quantity(number, unit: "ms")
                    }
            }
            let text = try #require(MetadataCoding.encode(metadata))
            #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
            #expect(MetadataCoding.decode(text) == metadata, "\(text)")
        }
    }

    @Test func theGatewaysMetadataIsWrittenAsBefore() throws {
        let metadata: [String: MetadataValue] = [
            MetadataKey.heartRateSensorLocation: .number(1),
            MetadataKey.heartRateVariabilityRMSSD: .quantity(23.5, unit: "ms"),
            MetadataKey.wasEstimated: .bool(true), "motion": .string("running"),
        ]
        let reference = try JSONSerialization.data(
            withJSONObject: [
                "heartRateSensorLocation": ["number": 1],
                "heartRateVariabilityRMSSD": ["quantity": 23.5, "unit": "ms"],
                "wasEstimated": ["bool": true], "motion": ["string": "running"],
            ], options: [.sortedKeys])
        #expect(MetadataCoding.encode(metadata) == String(decoding: reference, as: UTF8.self))
        #expect(MetadataCoding.decode(String(decoding: reference, as: UTF8.self)) == metadata)
        // What JSONSerialization wrote (escaped slashes, spaces, any key order) reads back too.
        #expect(MetadataCoding.decode(#" { "a\/b" : { "string" : "x\/y\u00e9" } } "#) == ["a/b": .string("x/yé")])
        #expect(MetadataCoding.decode(#"{"n":{"number":1.5e3}}"#) == ["n": .number(1_500)])
        #expect(
            MetadataCoding.decode(#"{"z":{"unit":"ms","quantity":2.5},"a":{"bool":false}}"#)
                == ["z": .quantity(2.5, unit: "ms"), "a": .bool(false)])
        // Members that are not tagged values, or tags this version does not know, are skipped.
        #expect(MetadataCoding.decode(#"{"n":{"other":[1]}}"#) == [:])
        #expect(MetadataCoding.decode(#"{"n":3,"s":{"string":"x"},"e":{}}"#) == ["s": .string("x")])
        #expect(MetadataCoding.decode(#"{"q":{"quantity":1},"b":{"bool":1}}"#) == [:])
        #expect(MetadataCoding.decode("not json") == [:])
        #expect(MetadataCoding.decode("[]") == [:])
        #expect(MetadataCoding.decode(#"{"k":{"string":"x"}} trailing"#) == [:])
        // A date out of Int64's range is skipped; one with a fraction keeps its whole milliseconds.
        #expect(MetadataCoding.decode(#"{"k":{"date":1e19},"j":{"bool":true}}"#) == ["j": .bool(true)])
        #expect(MetadataCoding.decode(#"{"k":{"date":9223372036854775808}}"#) == [:])
        #expect(MetadataCoding.decode(#"{"k":{"date":1.5e3}}"#) == ["k": .date(Instant(milliseconds: 1_500))])
        #expect(MetadataCoding.decode(#"{"k":{"date":-1.9}}"#) == ["k": .date(Instant(milliseconds: -1))])
        // Escapes: four hex digits, surrogate pairs as one character, a lone surrogate refused (no metadata).
        #expect(MetadataCoding.decode(#"{"k":{"string":"\u+041"}}"#) == [:])
        #expect(MetadataCoding.decode(#"{"k":{"string":"\ud83c\udfc3 \u2764"}}"#) == ["k": .string("🏃 ❤")])
        #expect(MetadataCoding.decode(#"{"k":{"string":"\ud83c"}}"#) == [:])
        #expect(MetadataCoding.decode(#"{"k":{"string":"\udfc3"}}"#) == [:])
        #expect(
            (["a": .number(1), "b": .quantity(.infinity, unit: "ms")] as [String: MetadataValue]).nonFiniteKey == "b")
        #expect(MetadataCoding.encode([:]) == nil)
        #expect(MetadataCoding.encode(["x": .number(.nan)]) == nil)
    }

    /// Numbers read back with the same bits, -0 and integers beyond 2^53 included; whole ones are written without a
    /// fraction, as before.
    @Test func numbersReadBackExactly() throws {
        var random = SplitMix64(seed: 0x4E55_4D42)
        var numbers: [Double] = [
            -0.0, 0, 1, -1, 9_007_199_254_740_992, 9_007_199_254_740_994, 1e300, .leastNonzeroMagnitude, 0.1,
        ]
        for _ in 0..<2_000 {
            let number = Double(bitPattern: random.next())
            if number.isFinite { numbers.append(number) }
        }
        for number in numbers {
            let text = try #require(MetadataCoding.encode(["n": .number(number)]))
            guard case .number(let back)? = MetadataCoding.decode(text)["n"] else {
                Issue.record("\(text) did not read back")
                continue
            }
            #expect(back.bitPattern == number.bitPattern, "\(text)")
        }
        #expect(MetadataCoding.encode(["n": .number(3)]) == #"{"n":{"number":3}}"#)
        #expect(MetadataCoding.encode(["n": .number(-0.0)]) == #"{"n":{"number":-0.0}}"#)
        #expect(MetadataCoding.encode(["n": .number(0.5)]) == #"{"n":{"number":0.5}}"#)
        #expect(MetadataCoding.encode(["k\u{1}": .string("\"")]) == #"{"k\u0001":{"string":"\""}}"#)
    }
}
