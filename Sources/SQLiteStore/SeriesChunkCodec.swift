internal import Support

/// The compact encoding of a dense series (one heart rate a second, RR beats): many samples of one stream in
/// one blob, so that a 1 Hz series costs about two bytes a sample instead of a row and an index entry each.
///
/// Layout (all integers LEB128 varints; signed ones zigzag-encoded):
///
/// ```
/// u8     version (1)
/// u8     flags: bit0 = values are integers after scaling by 10^scale; bit1 = every duration is 0 (instants)
/// u8     scale (0...6), meaningful with bit0
/// uvar   count
/// svar   first start (ms)            then, per further point, the delta of the start delta (ms)
/// uvar*  durations (ms), one per point, unless bit1
/// svar   first write-order number, then per further point the delta to the previous one (usually 1)
/// values with bit0: svar first scaled value, then per point the delta to the previous scaled value
///        without bit0: count IEEE-754 doubles, little-endian
/// ```
///
/// Decoding is total: any byte string either decodes or throws ``SeriesChunkError`` naming the offset.
enum SeriesChunkCodec {
    struct Point: Equatable, Sendable {
        var start: Int64
        var duration: Int64
        var value: Double
        /// The write order of the point (the store's sequence number, for change anchors).
        var seq: Int64 = 0
    }

    static let version: UInt8 = 1
    static let maximumScale = 6

    /// Encodes `points` (sorted by start; durations ≥ 0). Values round-trip exactly, scaled or not.
    static func encode(_ points: [Point]) -> [UInt8] {
        let scale = integerScale(points.lazy.map(\.value))
        let instants = points.allSatisfy { $0.duration == 0 }
        // Written through a pointer into room for the longest encoding (a varint takes at most 10 bytes: the
        // count, then a start, a duration, a write-order number and a value per point): appending byte by byte
        // to an array checked its capacity and uniqueness each time, most of the cost of encoding.
        let capacity = 3 + 10 + points.count * 40
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, written in
            var out = VarintWriter(buffer)
            out.byte(version)
            out.byte((scale == nil ? 0 : 1) | (instants ? 2 : 0))
            out.byte(UInt8(scale ?? 0))
            out.unsigned(UInt64(points.count))
            var previousStart: Int64 = 0
            var previousDelta: Int64 = 0
            for (index, point) in points.enumerated() {
                if index == 0 {
                    out.signed(point.start)
                } else {
                    let delta = point.start &- previousStart
                    out.signed(delta &- previousDelta)
                    previousDelta = delta
                }
                previousStart = point.start
            }
            if !instants { for point in points { out.unsigned(UInt64(max(0, point.duration))) } }
            var previousSeq: Int64 = 0
            for point in points {
                out.signed(point.seq &- previousSeq)
                previousSeq = point.seq
            }
            if let scale {
                let factor = pow10(scale)
                var previous: Int64 = 0
                for point in points {
                    let scaled = scaledInteger(point.value, factor) ?? 0  // integerScale checked every value
                    out.signed(scaled &- previous)
                    previous = scaled
                }
            } else {
                for point in points { out.fixed64(point.value.bitPattern) }
            }
            written = out.count
        }
    }

    /// Decodes a chunk written by ``encode(_:)``.
    static func decode(_ bytes: [UInt8]) throws(SeriesChunkError) -> [Point] {
        let columns = try decodeColumns(bytes)
        return (0..<columns.starts.count).map {
            Point(
                start: columns.starts[$0], duration: columns.durations[$0], value: columns.values[$0],
                seq: columns.seqs[$0])
        }
    }

    /// A chunk's points column by column.
    struct Columns {
        var starts: [Int64]
        var durations: [Int64]
        var seqs: [Int64]
        var values: [Double]
    }

    /// Decodes a chunk written by ``encode(_:)`` into its columns (what a read that makes no point value takes).
    static func decodeColumns(_ bytes: [UInt8]) throws(SeriesChunkError) -> Columns {
        var reader = VarintReader(bytes)
        let version = try reader.byte("version")
        guard version == Self.version else { throw SeriesChunkError(offset: 0, reason: "unknown version \(version)") }
        let flags = try reader.byte("flags")
        let scale = Int(try reader.byte("scale"))
        guard flags & ~3 == 0, scale <= maximumScale else {
            throw SeriesChunkError(offset: 1, reason: "bad flags \(flags) or scale \(scale)")
        }
        let count = try reader.unsigned("count")
        // Every point takes at least one byte per encoded column: a larger count cannot be genuine.
        guard count <= UInt64(bytes.count) else {
            throw SeriesChunkError(offset: reader.offset, reason: "count \(count) exceeds the chunk size")
        }
        var starts: [Int64] = []
        starts.reserveCapacity(Int(count))
        var previousStart: Int64 = 0
        var previousDelta: Int64 = 0
        for index in 0..<Int(count) {
            let raw = try reader.signed("start")
            if index == 0 {
                previousStart = raw
            } else {
                previousDelta = previousDelta &+ raw
                previousStart = previousStart &+ previousDelta
            }
            starts.append(previousStart)
        }
        var durations = [Int64](repeating: 0, count: Int(count))
        if flags & 2 == 0 {
            for index in 0..<Int(count) {
                let duration = try reader.unsigned("duration")
                guard duration <= UInt64(Int64.max) else {
                    throw SeriesChunkError(offset: reader.offset, reason: "duration out of range")
                }
                durations[index] = Int64(duration)
            }
        }
        var seqs: [Int64] = []
        seqs.reserveCapacity(Int(count))
        var previousSeq: Int64 = 0
        for _ in 0..<Int(count) {
            previousSeq = previousSeq &+ (try reader.signed("seq"))
            seqs.append(previousSeq)
        }
        var values: [Double] = []
        values.reserveCapacity(Int(count))
        if flags & 1 != 0 {
            let factor = pow10(scale)
            var previous: Int64 = 0
            for _ in 0..<Int(count) {
                previous = previous &+ (try reader.signed("value"))
                values.append(Double(previous) / factor)
            }
        } else {
            for _ in 0..<Int(count) { values.append(Double(bitPattern: try reader.fixed64("value"))) }
        }
        guard reader.isAtEnd else {
            throw SeriesChunkError(
                offset: reader.offset, reason: "\(bytes.count - reader.offset) bytes after the last value")
        }
        return Columns(starts: starts, durations: durations, seqs: seqs, values: values)
    }

    /// The smallest decimal scale that makes every value an integer that converts back exactly, if any.
    static func integerScale(_ values: some Collection<Double>) -> Int? {
        for scale in 0...maximumScale {
            let factor = pow10(scale)
            if values.allSatisfy({ scaledInteger($0, factor) != nil }) { return scale }
        }
        return nil
    }

    /// `value × factor` as an integer, when that integer divided by `factor` gives `value` back exactly.
    /// (Rounded half away from zero without a libm call; the check makes any rounding safe.)
    @inline(__always)
    static func scaledInteger(_ value: Double, _ factor: Double) -> Int64? {
        let scaled = value * factor
        guard abs(scaled) < 9.0e15 else { return nil }
        let integer = Int64(scaled + (scaled < 0 ? -0.5 : 0.5))
        return Double(integer) / factor == value ? integer : nil
    }

    static func pow10(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// Appends `value` as an LEB128 varint (for blobs built piece by piece, as tests do).
    static func appendUnsigned(_ value: UInt64, to out: inout [UInt8]) {
        out += [UInt8](unsafeUninitializedCapacity: 10) { buffer, written in
            var writer = VarintWriter(buffer)
            writer.unsigned(value)
            written = writer.count
        }
    }
}

/// Writes the fields of the layouts above into room the caller made for them (at most 10 bytes a varint, 8 a
/// fixed field): the encoders' counterpart of ``VarintReader``.
struct VarintWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// Bytes written so far.
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func byte(_ value: UInt8) {
        buffer[count] = value
        count += 1
    }

    mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            buffer[count] = UInt8(truncatingIfNeeded: rest) | 0x80
            count += 1
            rest >>= 7
        }
        buffer[count] = UInt8(rest)
        count += 1
    }

    mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// `value` in 8 bytes, little-endian.
    mutating func fixed64(_ value: UInt64) {
        var rest = value
        for _ in 0..<8 {
            buffer[count] = UInt8(truncatingIfNeeded: rest)
            count += 1
            rest >>= 8
        }
    }
}

/// A blob that does not decode (a series chunk, a heartbeat series' beats): which, where and why.
struct SeriesChunkError: Error, Equatable, CustomStringConvertible {
    var offset: Int
    var reason: String
    /// What kind of blob it was.
    var blob = "series chunk"
    var description: String { "\(blob): \(reason) at byte \(offset)" }
}

/// Bounds-checked reading of varints and fixed fields, shared by the blob codecs: Support's ``ByteCursor`` with the
/// LEB128 varints of the layouts above and errors that name the blob and the field.
struct VarintReader {
    private var cursor: ByteCursor<[UInt8]>
    /// Names the blob in errors.
    private let blob: String

    init(_ bytes: [UInt8], blob: String = "series chunk") {
        cursor = ByteCursor(bytes)
        self.blob = blob
    }

    var offset: Int { cursor.offset }
    var isAtEnd: Bool { cursor.isAtEnd }

    /// An error at `offset` in this blob.
    func error(_ reason: String, at offset: Int? = nil) -> SeriesChunkError {
        SeriesChunkError(offset: offset ?? self.offset, reason: reason, blob: blob)
    }

    mutating func byte(_ field: String) throws(SeriesChunkError) -> UInt8 {
        guard let byte = cursor.readUInt8() else { throw error("\(field) missing") }
        return byte
    }

    mutating func unsigned(_ field: String) throws(SeriesChunkError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let start = offset
            let byte = try byte(field)
            guard shift < 64, !(shift == 63 && byte > 1) else {
                throw error("\(field) varint longer than 64 bits", at: start)
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func signed(_ field: String) throws(SeriesChunkError) -> Int64 {
        let raw = try unsigned(field)
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func fixed64(_ field: String) throws(SeriesChunkError) -> UInt64 {
        guard let value = cursor.readUInt64(.little) else { throw error("\(field) truncated") }
        return value
    }
}
