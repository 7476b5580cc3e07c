internal import Support

/// An RFC 3339 time read from text (the edges' times: `import-samples` lines, GPX files): the instant and its offset
/// from UTC in seconds, or why the text is not one; and an instant written as such text (``text(_:offsetSeconds:)``). Accepted: `YYYY-MM-DD`, `T`, `t` or a space, `HH:MM[:SS]`, any
/// number of fraction digits (up to 30; the store keeps milliseconds, so further digits are dropped, which moves the
/// instant toward the earlier millisecond), a leap second `:60` read as `:59.999`, then `Z`, `z`, `±HH:MM` or
/// `±HHMM`.
public enum RFC3339Time: Sendable {
    case success(Instant, Int32)
    case failure(String)

    /// The time of `text`.
    public static func parse(_ text: String) -> RFC3339Time {
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    /// The time of `text`'s UTF-8 bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> RFC3339Time {
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard count <= bytes.count &- index else { return nil }
            var value = 0
            for position in index..<index &+ count {
                let digit = bytes[position] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value &* 10 &+ Int(digit)
            }
            index &+= count
            return value
        }
        func skip(_ first: UInt8, _ second: UInt8 = 0, _ third: UInt8 = 0) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            guard byte == first || (second != 0 && byte == second) || (third != 0 && byte == third) else {
                return false
            }
            index &+= 1
            return true
        }
        guard let year = digits(4), skip(UInt8(ascii: "-")), let month = digits(2), skip(UInt8(ascii: "-")),
            let day = digits(2)
        else {
            return .failure("expected YYYY-MM-DD")
        }
        guard skip(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")) else {
            return .failure("expected T, t or a space after the date, then the time and an offset")
        }
        guard let hour = digits(2), skip(UInt8(ascii: ":")), let minute = digits(2) else {
            return .failure("expected HH:MM after the date")
        }
        var second = 0
        var millisecond = 0
        if skip(UInt8(ascii: ":")) {
            guard let whole = digits(2) else { return .failure("expected two digits of seconds") }
            second = whole
            if skip(UInt8(ascii: ".")) {
                let first = index
                while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index &+= 1 }
                let count = index &- first
                guard count > 0 else { return .failure("expected digits after the decimal point") }
                guard count <= 30 else { return .failure("more than 30 fraction digits") }
                for position in 0..<3 {
                    millisecond &*= 10
                    if position < count { millisecond &+= Int(bytes[first &+ position] &- UInt8(ascii: "0")) }
                }
            }
        }
        if second == 60 { (second, millisecond) = (59, 999) }
        var offset: Int32 = 0
        if skip(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign: Int32 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index &+= 1
            guard let hours = digits(2) else { return .failure("expected ±HH:MM") }
            _ = skip(UInt8(ascii: ":"))
            guard let minutes = digits(2), hours <= 23, minutes <= 59 else {
                return .failure("expected ±HH:MM up to 23:59")
            }
            offset = sign * Int32(hours * 3_600 + minutes * 60)
        } else {
            return .failure("it needs Z or an offset (±HH:MM)")
        }
        guard index == bytes.count else { return .failure("unexpected text after the offset") }
        let local: LocalDateTime
        do {
            local = try LocalDateTime(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                millisecond: millisecond)
        } catch {
            return .failure("\(error)")
        }
        // The wall time at `offset`: UTC is that much earlier (east) or later (west).
        let milliseconds = local.naiveMilliseconds - Int64(offset) * 1_000
        guard Instant.supportedMilliseconds.contains(milliseconds) else { return .failure("outside the years 1-9999") }
        return .success(Instant(milliseconds: milliseconds), offset)
    }

    /// ISO 8601 with the sample's own offset, e.g. `2025-03-30T10:00:00.000+02:00`. Computed by calendar
    /// arithmetic (`CivilCalendar`, as `LocalDateTime`), not a `DateFormatter`, which would cost
    /// more than the rest of a listing; instants are within the years 1-9999 (`Instant.supportedMilliseconds`).
    public static func text(_ instant: Instant, offsetSeconds: Int32) -> String {
        let local = instant.milliseconds + Int64(offsetSeconds) * 1000
        let dayLength: Int64 = 86_400_000
        let days = local >= 0 ? local / dayLength : (local - dayLength + 1) / dayLength
        let time = local - days * dayLength
        let (year, month, day) = CivilCalendar.date(days: days)
        // Into bytes, digit by digit (exports format two instants per sample).
        var text: [UInt8] = []
        text.reserveCapacity(29)
        func padded(_ value: Int64, _ width: Int) {
            let digits = String(value).utf8
            if digits.count < width {
                text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - digits.count))
            }
            text.append(contentsOf: digits)
        }
        func add(_ character: Unicode.Scalar) { text.append(UInt8(ascii: character)) }
        padded(year, 4)
        add("-")
        padded(month, 2)
        add("-")
        padded(day, 2)
        add("T")
        padded(time / 3_600_000, 2)
        add(":")
        padded(time / 60_000 % 60, 2)
        add(":")
        padded(time / 1_000 % 60, 2)
        add(".")
        padded(time % 1_000, 3)
        if offsetSeconds == 0 {
            add("Z")
        } else {
            let magnitude = Int64(abs(Int(offsetSeconds)))
            add(offsetSeconds < 0 ? "-" : "+")
            padded(magnitude / 3600, 2)
            add(":")
            padded(magnitude % 3600 / 60, 2)
        }
        return String(decoding: text, as: UTF8.self)
    }
}
