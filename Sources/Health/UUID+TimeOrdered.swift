public import Foundation

extension UUID {
    /// A version-7 UUID: 48 bits of Unix milliseconds, then random bits. Sorted by creation time, so new sample
    /// ids land at the end of an index instead of all over it (random v4 keys insert several times slower).
    public static func timeOrdered(milliseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let random = generator.next() as UInt64
        let random2 = generator.next() as UInt64
        let ms = UInt64(bitPattern: milliseconds) & 0xFFFF_FFFF_FFFF
        let b0 = UInt8(truncatingIfNeeded: ms >> 40), b1 = UInt8(truncatingIfNeeded: ms >> 32)
        let b2 = UInt8(truncatingIfNeeded: ms >> 24), b3 = UInt8(truncatingIfNeeded: ms >> 16)
        let b4 = UInt8(truncatingIfNeeded: ms >> 8), b5 = UInt8(truncatingIfNeeded: ms)
        let b6 = 0x70 | UInt8(truncatingIfNeeded: random >> 60) & 0x0F  // version 7
        let b7 = UInt8(truncatingIfNeeded: random >> 52)
        let b8 = 0x80 | UInt8(truncatingIfNeeded: random >> 44) & 0x3F  // RFC 4122 variant
        let b9 = UInt8(truncatingIfNeeded: random >> 36)
        let rest = random2
        return UUID(
            uuid: (
                b0, b1, b2, b3, b4, b5, b6, b7, b8, b9,
                UInt8(truncatingIfNeeded: rest >> 40), UInt8(truncatingIfNeeded: rest >> 32),
                UInt8(truncatingIfNeeded: rest >> 24), UInt8(truncatingIfNeeded: rest >> 16),
                UInt8(truncatingIfNeeded: rest >> 8), UInt8(truncatingIfNeeded: rest)
            ))
    }

    /// Whether this UUID has the form of an id derived from a natural key
    /// (``QuantitySample/derivedID(type:source:device:start:end:)``): version 8 with the RFC 4122 variant. Such an id
    /// names only the sample of its natural key (`docs/store-semantics.md`, item 24).
    public var hasDerivedForm: Bool {
        uuid.6 >> 4 == 8 && uuid.8 & 0xC0 == 0x80
    }

    /// The 16 bytes, for storage.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// A UUID from 16 stored bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        self.init(uuid: value)
    }
}
