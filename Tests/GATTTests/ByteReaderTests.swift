import GATT
import Support
import TestSupport
import Testing

/// ``ByteReader``, ``ByteWriter`` and ``DecodeError``: the bounds-checked little-endian cursor under every decoder.
@Suite struct ByteReaderTests {
    static let bytes = h("01 34 12 56 34 12 78 56 34 12 9a 78 56 34 12 ff")

    @Test func readsAreLittleEndianAndAdvance() throws {
        try ByteReader.read(Self.bytes) { (reader) throws(DecodeError) in
            #expect(reader.offset == 0)
            #expect(reader.remaining == 16)
            #expect(!reader.isAtEnd)
            #expect(try reader.readUInt8("a") == 0x01)
            #expect(reader.offset == 1)
            #expect(try reader.readUInt16("b") == 0x1234)
            #expect(reader.offset == 3)
            #expect(try reader.readUInt24("c") == 0x12_3456)
            #expect(reader.offset == 6)
            #expect(try reader.readUInt32("d") == 0x1234_5678)
            #expect(reader.offset == 10)
            #expect(try reader.readUInt40("e") == 0x12_3456_789A)
            #expect(reader.offset == 15)
            #expect(reader.remaining == 1)
            #expect(try reader.readUInt8("f") == 0xFF)
            #expect(reader.isAtEnd)
            #expect(reader.remaining == 0)
        }
    }

    @Test func aFailingReadLeavesTheOffsetAndNamesFieldAndOffset() throws {
        try ByteReader.read(h("01 02 03")) { (reader) throws(DecodeError) in
            _ = try reader.readUInt8("flags")
            for (width, read) in Self.wideReads where width > 2 {
                do throws(DecodeError) {
                    _ = try read(&reader)
                    Issue.record("a \(width)-byte read of 2 bytes succeeded")
                } catch {
                    #expect(error == .truncated(field: "wide", offset: 1, needed: width, available: 2))
                    #expect(error.field == "wide")
                    #expect(error.offset == 1)
                }
                #expect(reader.offset == 1)
                #expect(reader.remaining == 2)
            }
            // The reader is still usable after a failed read.
            #expect(try reader.readUInt16("value") == 0x0302)
            #expect(reader.isAtEnd)
            do throws(DecodeError) {
                _ = try reader.readUInt8("past_end")
                Issue.record("read past the end succeeded")
            } catch {
                #expect(error == .truncated(field: "past_end", offset: 3, needed: 1, available: 0))
            }
            #expect(reader.offset == 3)
        }
    }

    /// Reads of 2, 3, 4 and 5 bytes, all named "wide".
    static let wideReads: [(Int, @Sendable (inout ByteReader) throws(DecodeError) -> UInt64)] = [
        (2, { (reader) throws(DecodeError) in UInt64(try reader.readUInt16("wide")) }),
        (3, { (reader) throws(DecodeError) in UInt64(try reader.readUInt24("wide")) }),
        (4, { (reader) throws(DecodeError) in UInt64(try reader.readUInt32("wide")) }),
        (5, { (reader) throws(DecodeError) in try reader.readUInt40("wide") }),
    ]

    @Test func everyWidthFailsOnAnEmptyValue() throws {
        try ByteReader.read([]) { (reader) throws(DecodeError) in
            #expect(reader.isAtEnd)
            for (width, read) in Self.wideReads {
                do throws(DecodeError) {
                    _ = try read(&reader)
                    Issue.record("a \(width)-byte read of nothing succeeded")
                } catch {
                    #expect(error == .truncated(field: "wide", offset: 0, needed: width, available: 0))
                }
            }
        }
    }

    @Test func readBytesAndRemaining() throws {
        try ByteReader.read(h("0a 0b 0c 0d 0e")) { (reader) throws(DecodeError) in
            #expect(try reader.readBytes("two", count: 2) == [0x0A, 0x0B])
            #expect(try reader.readBytes("none", count: 0) == [])
            do throws(DecodeError) {
                _ = try reader.readBytes("four", count: 4)
                Issue.record("read 4 of 3 bytes")
            } catch {
                #expect(error == .truncated(field: "four", offset: 2, needed: 4, available: 3))
            }
            do throws(DecodeError) {
                _ = try reader.readBytes("negative", count: -1)
                Issue.record("read -1 bytes")
            } catch {
                #expect(error.kind == "truncated")
                #expect(error.field == "negative")
            }
            #expect(reader.offset == 2)
            #expect(Array(reader.readRemaining()) == [0x0C, 0x0D, 0x0E])
            #expect(reader.isAtEnd)
            #expect(reader.readRemaining().isEmpty)
            #expect(reader.offset == 5)
        }
    }

    @Test func readReturnsTheBodysResultAndRethrows() {
        let value = try? ByteReader.read(h("2a")) { (reader) throws(DecodeError) in try reader.readUInt8("x") }
        #expect(value == 42)
        #expect(throws: DecodeError.truncated(field: "x", offset: 0, needed: 2, available: 1)) {
            try ByteReader.read(h("2a")) { (reader) throws(DecodeError) in try reader.readUInt16("x") }
        }
    }

    // MARK: ByteWriter

    @Test func writerIsLittleEndian() {
        var writer = ByteWriter()
        #expect(writer.bytes.isEmpty)
        writer.write(UInt8(0x01))
        writer.write(UInt16(0x1234))
        writer.writeUInt24(0x12_3456)
        writer.write(UInt32(0x1234_5678))
        writer.writeUInt40(0x12_3456_789A)
        writer.write(contentsOf: [0xFE, 0xFF])
        #expect(writer.bytes == h("01 34 12 56 34 12 78 56 34 12 9a 78 56 34 12 fe ff"))
    }

    @Test func writerKeepsOnlyTheLowBitsOfNarrowFields() {
        var writer = ByteWriter(capacity: 8)
        writer.writeUInt24(0xAB12_3456)
        writer.writeUInt40(0xFFFF_FF12_3456_789A)
        #expect(writer.bytes == h("56 34 12 9a 78 56 34 12"))
    }

    @Test func writerAndReaderAgree() throws {
        var rng = SplitMix64(seed: 0x00C0_FFEE)
        for _ in 0..<500 {
            let (a, b, c, d, e) = (rng.uint8(), rng.uint16(), rng.next() & 0xFF_FFFF, rng.uint32(), rng.next())
            var writer = ByteWriter()
            writer.write(a)
            writer.write(b)
            writer.writeUInt24(UInt32(c))
            writer.write(d)
            writer.writeUInt40(e)
            #expect(writer.bytes.count == 15)
            try ByteReader.read(writer.bytes) { (reader) throws(DecodeError) in
                #expect(try reader.readUInt8("a") == a)
                #expect(try reader.readUInt16("b") == b)
                #expect(try reader.readUInt24("c") == UInt32(c))
                #expect(try reader.readUInt32("d") == d)
                #expect(try reader.readUInt40("e") == e & 0xFF_FFFF_FFFF)
                #expect(reader.isAtEnd)
            }
        }
    }

    // MARK: DecodeError

    static let errorCases: [(DecodeError, String, String?, Int, String)] = [
        (.empty, "empty", nil, 0, "empty value: no bytes at all"),
        (
            .truncated(field: "energy_expended", offset: 2, needed: 2, available: 0), "truncated", "energy_expended", 2,
            "truncated: field 'energy_expended' at byte offset 2 needs 2 bytes, 0 left"
        ),
        (
            .truncated(field: "heart_rate", offset: 1, needed: 1, available: 0), "truncated", "heart_rate", 1,
            "truncated: field 'heart_rate' at byte offset 1 needs 1 byte, 0 left"
        ),
        (
            .malformed(field: "rr_interval", offset: 4, reason: "odd"), "malformed", "rr_interval", 4,
            "malformed: field 'rr_interval' at byte offset 4: odd"
        ),
        (
            .invalidLength(expected: 1, actual: 0), "invalid_length", nil, 0,
            "invalid length: expected exactly 1 byte, got 0"
        ),
        (
            .invalidLength(expected: 8, actual: 9), "invalid_length", nil, 8,
            "invalid length: expected exactly 8 bytes, got 9"
        ),
        (
            .outOfRange(field: "battery_level", offset: 0, value: 101), "out_of_range", "battery_level", 0,
            "out of range: field 'battery_level' at byte offset 0 holds 101"
        ),
    ]

    @Test(arguments: errorCases)
    func decodeErrorDescribesItself(
        _ error: DecodeError, _ kind: String, _ field: String?, _ offset: Int, _ description: String
    ) {
        #expect(error.kind == kind)
        #expect(error.field == field)
        #expect(error.offset == offset)
        #expect(error.description == description)
        #expect("\(error)" == description)
    }
}
