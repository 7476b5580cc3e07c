import GATT
import Support
import TestSupport
import Testing

// Helpers shared by the GATT tests: a hex literal parser that does not depend on `Hex` (so the decoder tests do
// not rest on the code they would otherwise also be testing), a seeded RNG, and decode shorthands.

/// Bytes from a hex literal such as `"16 3c 11 04"` or `"163c1104"`. Spaces are ignored; anything else that is
/// not a hex digit is a mistake in the test itself and stops the run.
func h(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var high: UInt8?
    for character in text.utf8 where character != UInt8(ascii: " ") {
        let nibble: UInt8
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
        default: preconditionFailure("bad hex literal in a test: \(text)")
        }
        if let pending = high {
            bytes.append(pending << 4 | nibble)
            high = nil
        } else {
            high = nibble
        }
    }
    precondition(high == nil, "odd number of digits in a test hex literal: \(text)")
    return bytes
}

/// Lower-case hex with spaces, for failure messages.
func spaced(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let text = String(byte, radix: 16)
        return byte < 0x10 ? "0" + text : text
    }.joined(separator: " ")
}

/// The error `T(decoding:)` throws for `bytes`, or `nil` when it decodes.
func decodeError<T: CharacteristicValue>(_ type: T.Type, _ bytes: [UInt8]) -> DecodeError? {
    do throws(DecodeError) {
        _ = try T(decoding: bytes)
        return nil
    } catch {
        return error
    }
}

/// Seeds and small-integer draws for the GATT property tests (the generator itself is in TestSupport).
extension SplitMix64 {
    /// A seed derived from a name with FNV-1a, stable across runs (unlike `String.hashValue`).
    init(name: String, salt: UInt64 = 0) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        self.init(seed: hash ^ salt)
    }

    mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &self) }
    }

    mutating func bool() -> Bool { Bool.random(using: &self) }

    /// A value from `make` or `nil`, each half the time.
    mutating func maybe<T>(_ make: (inout SplitMix64) -> T) -> T? {
        bool() ? make(&self) : nil
    }

    mutating func uint16() -> UInt16 { UInt16.random(in: .min ... .max, using: &self) }
    mutating func uint32() -> UInt32 { UInt32.random(in: .min ... .max, using: &self) }
    mutating func uint8() -> UInt8 { UInt8.random(in: .min ... .max, using: &self) }
}

@Suite struct SplitMix64Tests {
    @Test func matchesTheReferenceSequenceForSeedZero() {
        // Reference output of splitmix64.c (Vigna) seeded with 0.
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(rng.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func sameNameSameSequence() {
        var first = SplitMix64(name: "heart-rate-measurement")
        var second = SplitMix64(name: "heart-rate-measurement")
        var other = SplitMix64(name: "rsc-measurement")
        let a = first.bytes(count: 32)
        #expect(a == second.bytes(count: 32))
        #expect(a != other.bytes(count: 32))
    }
}
