import Foundation
import Health
import Support

/// Bytes on their way to stdout or a file: appended in place and handed to `sink` in large writes (about
/// ``flushSize`` at a time), so that an export makes a few hundred writes a second, not one per sample. Holds at
/// most ``flushSize`` plus the longest line appended (a line longer than the room left grows the buffer once).
///
/// ``SampleTemplate`` writes samples straight into ``reserve(_:)``'s room with the formatters below: a UUID, an
/// instant in RFC 3339 with the sample's offset, a double in its shortest round-trip form and an integer, each the
/// same bytes the general writers make (``StoreArguments/format(_:offsetSeconds:)``, Support's `JSONWriter`).
final class OutputBuffer {
    /// Raised by the sink (a file that cannot be written).
    typealias Sink = (UnsafeRawBufferPointer) throws(PrivateFile.Failure) -> Void

    /// How many bytes are gathered before a write.
    static let flushSize = 256 << 10

    private(set) var base: UnsafeMutablePointer<UInt8>
    /// Bytes held, from ``base``.
    var count = 0
    private var capacity: Int
    private let sink: Sink

    init(sink: @escaping Sink) {
        capacity = Self.flushSize + (64 << 10)
        base = .allocate(capacity: capacity)
        self.sink = sink
    }

    deinit { base.deallocate() }

    /// Makes room for `more` bytes after ``count`` (at ``base`` + ``count``).
    func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: count + more)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = count + more
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Writes what is held once it reaches ``flushSize``.
    func flushWhenFull() throws(PrivateFile.Failure) {
        if count >= Self.flushSize { try flush() }
    }

    /// Writes everything held.
    func flush() throws(PrivateFile.Failure) {
        guard count > 0 else { return }
        let held = UnsafeRawBufferPointer(start: base, count: count)
        count = 0
        try sink(held)
    }
}

/// The formatters of ``OutputBuffer``'s users: each writes at `to` and returns how many bytes it wrote, at most the
/// size it names; `nil` (nothing meant) where the general writer is to format the value instead.
enum ByteFormat {
    /// The room each of ``uuid(_:to:)``, ``double(_:to:)``, ``integer(_:to:)`` and ``Clock/instant(_:to:)`` takes (the
    /// last writes 39 bytes, of which at most 32 count).
    static let maximumField = 40

    /// Each byte's two lower-case hex digits, as the two bytes of a little-endian integer.
    private static let hexPairs: [UInt16] = (0..<256).map { byte in
        let digits = Array("0123456789abcdef".utf8)
        return UInt16(digits[byte >> 4]) | UInt16(digits[byte & 0x0F]) << 8
    }

    /// `0190c2a8-...`: the lower-case 8-4-4-4-12 form (`uuidString.lowercased()`); 36 bytes.
    static func uuid(_ id: UUID, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let raw = UnsafeMutableRawPointer(out)
        withUnsafeBytes(of: id.uuid) { bytes in
            hexPairs.withUnsafeBufferPointer { pairs in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    raw.storeBytes(of: pairs[Int(bytes[index])].littleEndian, toByteOffset: position, as: UInt16.self)
                    position += 2
                }
            }
        }
        return 36
    }

    /// Copies `count` bytes from `source` to `out` eight at a time: up to 7 bytes past each end are read and
    /// written (the callers' buffers have that room), in return for no call per copy.
    @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, _ count: Int, to out: UnsafeMutablePointer<UInt8>) {
        var offset = 0
        while offset < count {
            UnsafeMutableRawPointer(out + offset).storeBytes(
                of: UnsafeRawPointer(source + offset).loadUnaligned(as: UInt64.self), as: UInt64.self)
            offset += 8
        }
    }

    /// An instant as ``StoreArguments/format(_:offsetSeconds:)`` writes it, `2025-03-30T10:00:00.000+02:00`, for a
    /// stream's offset whose suffix (`Z`, `+02:00`) the clock holds.
    struct Clock {
        let offsetMilliseconds: Int64
        /// What follows the milliseconds: `Z` or the offset, at most 9 bytes, in 16 (written whole: a field has
        /// room for them), and how many there are.
        private let suffix: (UInt64, UInt64)
        private let suffixCount: Int
        /// The last day written (days since 1970-01-01 in local time) and its `YYYY-MM-DD`.
        private var day = Int64.min
        private var date: (UInt64, UInt16) = (0, 0)
        /// The last instant written and its first 24 bytes (a sample's end is often its start).
        private var last = Int64.min
        private var lastText: (UInt64, UInt64, UInt64) = (0, 0, 0)

        /// The clock of `offsetSeconds`, its suffix as the general writer makes it; `nil` when that is longer than
        /// 9 bytes (an offset of 100,000 hours or more, which no stored sample has).
        init?(offsetSeconds: Int32) {
            let text = Array(StoreArguments.format(Instant(milliseconds: 0), offsetSeconds: offsetSeconds).utf8)
            guard text.count >= 24, text.count <= 23 + 9, text[19] == UInt8(ascii: ".") else { return nil }
            offsetMilliseconds = Int64(offsetSeconds) * 1_000
            var suffix: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &suffix) { $0.copyBytes(from: text[23...]) }
            self.suffix = suffix
            suffixCount = text.count - 23
        }

        /// Two decimal digits of `value` (0-99) as the low two bytes of a little-endian word.
        @inline(__always)
        private static func pair(_ value: Int64) -> UInt64 {
            (UInt64(UInt8(ascii: "0")) + UInt64(value / 10)) | (UInt64(UInt8(ascii: "0")) + UInt64(value % 10)) << 8
        }

        /// Writes the suffix after an instant's 23 bytes; returns the instant's length.
        @inline(__always)
        private func end(_ out: UnsafeMutablePointer<UInt8>) -> Int {
            let raw = UnsafeMutableRawPointer(out)
            raw.storeBytes(of: suffix.0, toByteOffset: 23, as: UInt64.self)
            raw.storeBytes(of: suffix.1, toByteOffset: 31, as: UInt64.self)
            return 23 + suffixCount
        }

        /// Writes `milliseconds` (since the Unix epoch) in local time and the suffix; `nil` outside the years
        /// 0-9999, whose text the general writer makes differently.
        mutating func instant(_ milliseconds: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int? {
            if milliseconds == last {
                let raw = UnsafeMutableRawPointer(out)
                raw.storeBytes(of: lastText.0.littleEndian, as: UInt64.self)
                raw.storeBytes(of: lastText.1.littleEndian, toByteOffset: 8, as: UInt64.self)
                raw.storeBytes(of: lastText.2.littleEndian, toByteOffset: 16, as: UInt64.self)
                return end(out)
            }
            let (local, overflow) = milliseconds.addingReportingOverflow(offsetMilliseconds)
            guard !overflow else { return nil }
            let dayLength: Int64 = 86_400_000
            let days = local >= 0 ? local / dayLength : (local - dayLength + 1) / dayLength
            if days != day {
                guard days >= -719_528, days <= 2_932_896 else { return nil }  // 0000-01-01 ... 9999-12-31
                let (year, month, dayOfMonth) = CivilCalendar.date(days: days)
                var text: [UInt8] = Array(repeating: 0, count: 10)
                ByteFormat.digits(year, 4, &text, 0)
                text[4] = UInt8(ascii: "-")
                ByteFormat.digits(month, 2, &text, 5)
                text[7] = UInt8(ascii: "-")
                ByteFormat.digits(dayOfMonth, 2, &text, 8)
                text.withUnsafeBytes {
                    date = (
                        UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)),
                        UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
                    )
                }
                day = days
            }
            // The 23 bytes as three words built in registers (bytes written one by one and read back as words
            // stalled on every sample): date, `T`, hours, minutes, seconds, milliseconds.
            let time = local - days * dayLength
            let seconds = time / 1_000
            let millis = time - seconds * 1_000
            let first = date.0
            let second =
                UInt64(date.1) | UInt64(UInt8(ascii: "T")) << 16 | Self.pair(seconds / 3_600) << 24
                | UInt64(UInt8(ascii: ":")) << 40 | Self.pair(seconds / 60 % 60) << 48
            let third =
                UInt64(UInt8(ascii: ":")) | Self.pair(seconds % 60) << 8 | UInt64(UInt8(ascii: ".")) << 24
                | (UInt64(UInt8(ascii: "0")) + UInt64(millis / 100)) << 32 | Self.pair(millis % 100) << 40
            lastText = (first, second, third)
            let raw = UnsafeMutableRawPointer(out)
            raw.storeBytes(of: first.littleEndian, as: UInt64.self)
            raw.storeBytes(of: second.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: third.littleEndian, toByteOffset: 16, as: UInt64.self)
            last = milliseconds
            return end(out)
        }
    }

    /// `width` decimal digits of `value` (non-negative, fewer digits than `width` allows) into `text` at `at`.
    static func digits(_ value: Int64, _ width: Int, _ text: inout [UInt8], _ at: Int) {
        var rest = value
        for position in stride(from: at + width - 1, through: at, by: -1) {
            text[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
    }

    /// `value` in decimal; at most 20 bytes.
    static func integer(_ value: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var position = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            position = 1
        }
        return position + unsigned(value.magnitude, to: out + position)
    }

    /// `value` in decimal.
    @inline(__always)
    static func unsigned(_ value: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20, value >= bound {
            digits += 1
            bound = bound &* 10
        }
        var rest = value
        for position in stride(from: digits - 1, through: 0, by: -1) {
            out[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        return digits
    }

    /// Powers of ten a decimal's fraction is tried with.
    private static let scales: [Double] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

    /// A double as Support's `JSONWriter` writes it (Swift's shortest round-trip `description`; `null` when not
    /// finite): `72.0`, `0.97`, `-12.5`. Written here for values of at most 15 digits before the point and 6 after
    /// it (below 10^9), from 0.0001 on (the forms without an exponent), else through `description`; at most 24
    /// bytes.
    static func double(_ value: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let magnitude = abs(value)
        if magnitude < 1e15, magnitude >= 1e-4 || value == 0, !(value == 0 && value.sign == .minus) {
            for (scale, factor) in scales.enumerated() {
                // Below 10^9 a value's neighbours are closer than 10^-6: one decimal of each length can be its.
                if scale > 0, magnitude >= 1e9 { break }
                let scaled = magnitude * factor
                let integer = UInt64(scaled + 0.5)
                // The decimal integer / 10^scale reads back as `value` (division rounds correctly): the digits
                // with the fewest decimals that do, which Swift's shortest form is.
                guard Double(integer) / factor == magnitude else { continue }
                var position = 0
                if value < 0 {
                    out[0] = UInt8(ascii: "-")
                    position = 1
                }
                if scale == 0 {
                    position += unsigned(integer, to: out + position)
                    out[position] = UInt8(ascii: ".")
                    out[position + 1] = UInt8(ascii: "0")
                    return position + 2
                }
                let power = UInt64(factor)
                position += unsigned(integer / power, to: out + position)
                out[position] = UInt8(ascii: ".")
                position += 1
                var fraction = integer % power
                for digit in stride(from: scale - 1, through: 0, by: -1) {
                    out[position + digit] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction % 10)
                    fraction /= 10
                }
                return position + scale
            }
        }
        var writer = JSONWriter(capacity: 32)
        writer.double(value)
        return writer.bytes.withUnsafeBufferPointer { bytes in
            out.update(from: bytes.baseAddress!, count: bytes.count)
            return bytes.count
        }
    }
}
