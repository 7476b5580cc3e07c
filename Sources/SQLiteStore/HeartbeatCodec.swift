import Health

/// The compact encoding of a heartbeat series' beats: one blob per series, about 1.5 bytes a beat.
///
/// RR intervals are stored as integers in a unit chosen per series, the first that holds every one exactly:
/// 1/1024 s (the BLE Heart Rate Measurement unit, so the gateway's values), then 1 ms, then 1 µs (rounded to the
/// nearest; the only case that can lose anything). Each beat stores the change of its RR interval from the beat
/// before, with two flag bits. A beat's offset is not stored when it equals the previous beat's offset plus its
/// RR interval (for the first beat: its RR interval), as it does in a series of cumulative sums; otherwise it
/// is stored, in the first of the same units that holds all stored offsets exactly.
///
/// Round trip: decoding gives back exactly the `Double`s that were encoded when the RR intervals and the stored
/// offsets are multiples of 1/1024 s, or of 1 ms, or (as the nearest `Double`) of 1 µs; other values come back
/// rounded to the nearest microsecond. Gap flags always come back exactly.
///
/// Layout (varints are LEB128; signed ones zigzag-encoded):
///
/// ```
/// u8    version (1)
/// u8    units: low nibble the RR unit, high nibble the offset unit (0 = 1/1024 s, 1 = 1 ms, 2 = 1 µs)
/// uvar  count
/// per beat:
///   uvar  zigzag(RR - previous RR, in units; the first beat's previous RR is 0) << 2
///         | 2 when the offset follows | 1 when the beat is preceded by a gap
///   uvar  the offset in offset units, when flagged
/// ```
///
/// Decoding is total: any byte string decodes to beats with increasing offsets and positive RR intervals, or
/// throws ``SeriesChunkError`` naming the offset.
enum HeartbeatCodec {
    static let version: UInt8 = 1

    /// A unit the integers of a blob count.
    enum Unit: UInt8, CaseIterable {
        case tick = 0  // 1/1024 s
        case millisecond = 1
        case microsecond = 2

        /// `value` (ms) in this unit, rounded; non-finite or huge values (which validation rejects) clamp.
        func count(_ value: Double) -> Int64 {
            let scaled: Double =
                switch self {
                case .tick: value / 0.976_562_5
                case .millisecond: value
                case .microsecond: value * 1_000
                }
            guard scaled.isFinite else { return 0 }
            return Int64(max(-9.0e15, min(9.0e15, scaled.rounded())))
        }

        /// `count` of this unit in ms.
        func milliseconds(_ count: Int64) -> Double {
            switch self {
            case .tick: Double(count) * 0.976_562_5  // exact: 1/1024 s is 125/128 ms
            case .millisecond: Double(count)
            case .microsecond: Double(count) / 1_000
            }
        }

        /// The first unit in which every value is a whole number (microseconds when none is).
        static func coarsest(for values: some Sequence<Double>) -> Unit {
            var candidates: [Unit] = [.tick, .millisecond]
            for value in values {
                candidates.removeAll { $0.milliseconds($0.count(value)) != value }
                if candidates.isEmpty { return .microsecond }
            }
            return candidates.first ?? .microsecond
        }
    }

    /// Encodes beats that passed ``HeartbeatSeriesSample/invalidityReason`` (finite, offsets increasing).
    static func encode(_ beats: [Beat]) -> [UInt8] {
        let rrUnit = Unit.coarsest(for: beats.lazy.map(\.rrMilliseconds))
        // Which offsets must be stored (assuming they come back exact), to choose their unit.
        var stored: [Double] = []
        var previous = 0.0
        for beat in beats {
            let implied = previous + rrUnit.milliseconds(rrUnit.count(beat.rrMilliseconds))
            if implied != beat.offsetMilliseconds { stored.append(beat.offsetMilliseconds) }
            previous = beat.offsetMilliseconds
        }
        let offsetUnit = Unit.coarsest(for: stored)

        var out: [UInt8] = [version, rrUnit.rawValue | offsetUnit.rawValue << 4]
        out.reserveCapacity(3 + beats.count * 2)
        SeriesChunkCodec.appendUnsigned(UInt64(beats.count), to: &out)
        var previousRR: Int64 = 0
        var previousOffset = 0.0  // as the decoder will see it
        for beat in beats {
            let rr = rrUnit.count(beat.rrMilliseconds)
            let implied = previousOffset + rrUnit.milliseconds(rr)
            let explicit = implied != beat.offsetMilliseconds
            let delta = rr &- previousRR
            let zigzag = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
            SeriesChunkCodec.appendUnsigned(
                zigzag << 2 | (explicit ? 2 : 0) | (beat.precededByGap ? 1 : 0), to: &out)
            if explicit {
                let offset = offsetUnit.count(beat.offsetMilliseconds)
                SeriesChunkCodec.appendUnsigned(UInt64(max(0, offset)), to: &out)
                previousOffset = offsetUnit.milliseconds(max(0, offset))
            } else {
                previousOffset = implied
            }
            previousRR = rr
        }
        return out
    }

    /// Decodes beats written by ``encode(_:)``.
    static func decode(_ bytes: [UInt8]) throws(SeriesChunkError) -> [Beat] {
        var reader = VarintReader(bytes, blob: "heartbeat series beats")
        let version = try reader.byte("version")
        guard version == Self.version else { throw reader.error("unknown version \(version)", at: 0) }
        let units = try reader.byte("units")
        guard let rrUnit = Unit(rawValue: units & 0x0F), let offsetUnit = Unit(rawValue: units >> 4) else {
            throw reader.error("unknown units \(units)", at: 1)
        }
        let count = try reader.unsigned("count")
        // Every beat takes at least one byte: a larger count cannot be genuine.
        guard count <= UInt64(bytes.count) else { throw reader.error("count \(count) exceeds the blob size") }
        var beats: [Beat] = []
        beats.reserveCapacity(Int(count))
        var rr: Int64 = 0
        var offset = 0.0
        for index in 0..<Int(count) {
            let start = reader.offset
            let word = try reader.unsigned("beat \(index + 1)")
            let zigzag = word >> 2
            rr = rr &+ Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
            let rrMilliseconds = rrUnit.milliseconds(rr)
            guard rrMilliseconds > 0 else {
                throw reader.error("beat \(index + 1) has RR interval \(rrMilliseconds) ms", at: start)
            }
            var next = offset + rrMilliseconds
            if word & 2 != 0 {
                let stored = try reader.unsigned("offset of beat \(index + 1)")
                guard stored <= 1 << 53 else { throw reader.error("offset of beat \(index + 1) out of range") }
                next = offsetUnit.milliseconds(Int64(stored))
            }
            guard index == 0 || next > offset else {
                throw reader.error("beat \(index + 1) does not come after the one before", at: start)
            }
            offset = next
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rrMilliseconds, precededByGap: word & 1 != 0))
        }
        guard reader.isAtEnd else {
            throw reader.error("\(bytes.count - reader.offset) bytes after the last beat")
        }
        return beats
    }
}
