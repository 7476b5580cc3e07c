import Support
import Testing

/// ``ByteCursor``: both byte orders, every width, reads that leave the cursor where it was when they fail.
@Suite struct ByteCursorTests {
    static let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]

    @Test func integersInBothByteOrders() {
        var little = ByteCursor(Self.bytes)
        #expect(little.readUInt8() == 0x01)
        #expect(little.readUInt16(.little) == 0x0302)
        #expect(little.readUInt24(.little) == 0x06_0504)
        #expect(little.offset == 6)
        #expect(little.remaining == 3)
        var big = ByteCursor(Self.bytes)
        #expect(big.readUInt16(.big) == 0x0102)
        #expect(big.readUInt32(.big) == 0x0304_0506)
        #expect(big.readUInt24(.big) == 0x07_0809)
        #expect(big.isAtEnd)
        var wide = ByteCursor(Self.bytes)
        #expect(wide.readUInt64(.little) == 0x0807_0605_0403_0201)
        wide = ByteCursor(Self.bytes)
        #expect(wide.readUInt64(.big) == 0x0102_0304_0506_0708)
        wide = ByteCursor(Self.bytes)
        #expect(wide.readUInt40(.little) == 0x05_0403_0201)
        #expect(wide.readUInt32(.little) == 0x0908_0706)
        #expect(wide.readUInt8() == nil)
    }

    @Test func everyWidthFrom1To8Bytes() {
        for width in 1...8 {
            var little = ByteCursor(Self.bytes)
            var big = ByteCursor(Self.bytes)
            let expectedLittle = Self.bytes.prefix(width).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let expectedBig = Self.bytes.prefix(width).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(little.readUnsigned(byteCount: width, .little) == expectedLittle, "\(width)")
            #expect(big.readUnsigned(byteCount: width, .big) == expectedBig, "\(width)")
            #expect(little.offset == width && big.offset == width)
        }
        var cursor = ByteCursor(Self.bytes)
        #expect(cursor.readUnsigned(byteCount: 0, .little) == nil)
        #expect(cursor.readUnsigned(byteCount: 9, .big) == nil)
        #expect(cursor.readUnsigned(byteCount: -1, .big) == nil)
        #expect(cursor.offset == 0)
    }

    @Test func aReadThatDoesNotFitLeavesTheCursorWhereItWas() {
        var cursor = ByteCursor(Self.bytes)
        #expect(cursor.take(7) == Self.bytes[0..<7])
        #expect(cursor.readUInt32(.little) == nil)
        #expect(cursor.readUInt24(.big) == nil)
        #expect(cursor.readUInt64(.big) == nil)
        #expect(cursor.take(3) == nil)
        #expect(cursor.take(-1) == nil)
        #expect(cursor.offset == 7)
        #expect(cursor.readUInt16(.big) == 0x0809)
        #expect(cursor.readUInt8() == nil)
        #expect(cursor.rest().isEmpty)
        #expect(cursor.offset == 9)
    }

    /// Over a slice, offsets count from the slice's start and taken bytes keep the array's indices.
    @Test func slicesStayViewsOfTheirArray() {
        let slice = Self.bytes[3..<9]
        var cursor = ByteCursor(slice)
        #expect(cursor.offset == 0)
        #expect(cursor.readUInt8() == 0x04)
        let taken = cursor.take(2)
        #expect(taken == Self.bytes[4..<6])
        #expect(taken?.startIndex == 4)
        #expect(cursor.offset == 3)
        var inner = ByteCursor(cursor.rest())
        #expect(inner.remaining == 3)
        #expect(inner.readUInt24(.little) == 0x09_0807)
        #expect(cursor.isAtEnd)
    }

    @Test func borrowedBuffers() {
        Self.bytes.withUnsafeBufferPointer { buffer in
            var cursor = ByteCursor(buffer)
            #expect(cursor.readUInt16(.little) == 0x0201)
            #expect(cursor.take(3).map(Array.init) == [0x03, 0x04, 0x05])
            #expect(Array(cursor.rest()) == [0x06, 0x07, 0x08, 0x09])
        }
        let empty: [UInt8] = []
        empty.withUnsafeBufferPointer { buffer in
            var cursor = ByteCursor(buffer)
            #expect(cursor.isAtEnd && cursor.readUInt8() == nil && cursor.rest().isEmpty)
        }
    }
}
