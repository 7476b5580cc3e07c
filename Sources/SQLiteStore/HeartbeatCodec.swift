import Health
internal import StoreEngine

/// The compact encoding of a heartbeat series' beats: one blob per series, a little over a byte a beat.
///
/// RR intervals are stored as integers in a unit chosen per series, the first that holds every one exactly:
/// 1/1024 s (the BLE Heart Rate Measurement unit, so the gateway's values), then 1 ms, then 1/16 µs (which holds
/// every multiple of the other two, their sums, and every multiple of 1 µs; anything else is rounded to it).
/// Each beat stores the change of its RR interval from the beat before: one byte while it is under 64 units
/// (62.5 ms in 1/1024 s). A beat's offset is not stored when it equals the previous beat's offset plus its RR
/// interval (for the first beat: its RR interval), as it does in a series of cumulative sums; otherwise it is
/// stored, in the first of the same units that holds every stored offset exactly. The few beats with a stored
/// offset or a gap before them are listed up front, so the common beat spends no bits on flags.
///
/// Round trip: decoding gives back exactly the `Double`s that were encoded when they are multiples of 1/1024 s,
/// of 1 ms or of 1 µs (as the nearest `Double`), or sums of such (a whole-millisecond start plus RR intervals
/// from BLE); anything else comes back rounded to the nearest 1/16 µs. Gap flags always come back exactly.
///
/// Layout (varints are LEB128; signed ones zigzag-encoded):
///
/// ```
/// u8    version (2; version 1, written before schema 8, is rewritten when a store migrates)
/// u8    units: low nibble the RR unit, high nibble the offset unit (0 = 1/1024 s, 1 = 1 ms, 2 = 1/16 µs)
/// uvar  count of beats
/// uvar  count of flagged beats, then per flagged beat, in order:
///         uvar  (index - previous flagged index - 1, the first counted from -1) << 2
///               | 2 when its offset follows | 1 when it is preceded by a gap
///         uvar  the offset in offset units, when flagged so
/// svar  per beat: RR - previous RR, in RR units (the first beat's previous RR is 0)
/// ```
///
/// Decoding is total: any byte string decodes to beats with increasing offsets and positive RR intervals, or
/// throws ``SeriesChunkError`` naming the offset.
enum HeartbeatCodec {
    static let version: UInt8 = 2

    /// A unit the integers of a blob count.
    enum Unit: UInt8, CaseIterable {
        case tick = 0  // 1/1024 s = 125/128 ms
        case millisecond = 1
        case sixteenthMicrosecond = 2  // 1/16,000 ms: 15,625 ticks, 16,000 per ms, 16 per µs

        /// `value` (ms) in this unit, rounded; non-finite or huge values (which validation rejects) clamp.
        func count(_ value: Double) -> Int64 {
            let scaled: Double =
                switch self {
                case .tick: value / 0.976_562_5
                case .millisecond: value
                case .sixteenthMicrosecond: value * 16_000
                }
            guard scaled.isFinite else { return 0 }
            return Int64(max(-9.0e15, min(9.0e15, scaled.rounded())))
        }

        /// `count` of this unit in ms.
        func milliseconds(_ count: Int64) -> Double {
            switch self {
            case .tick: Double(count) * 0.976_562_5  // exact
            case .millisecond: Double(count)
            case .sixteenthMicrosecond: Double(count) / 16_000  // correctly rounded: µs multiples come back exactly
            }
        }

        /// The first unit in which every value is a whole number (1/16 µs when none is).
        static func coarsest(for values: some Sequence<Double>) -> Unit {
            var tick = true
            var millisecond = true
            for value in values {
                if tick, Unit.tick.milliseconds(Unit.tick.count(value)) != value { tick = false }
                if millisecond, Unit.millisecond.milliseconds(Unit.millisecond.count(value)) != value {
                    millisecond = false
                }
                if !tick && !millisecond { return .sixteenthMicrosecond }
            }
            return tick ? .tick : .millisecond
        }
    }

    /// Encodes beats that passed ``HeartbeatSeriesSample/invalidityReason`` (finite, offsets increasing).
    static func encode(_ beats: [Beat]) -> [UInt8] {
        let rrUnit = Unit.coarsest(for: beats.lazy.map(\.rrMilliseconds))
        let rr = beats.map { rrUnit.count($0.rrMilliseconds) }
        // Which offsets must be stored (assuming they come back exact), to choose their unit.
        var stored: [Double] = []
        var previous = 0.0
        for (index, beat) in beats.enumerated() {
            if previous + rrUnit.milliseconds(rr[index]) != beat.offsetMilliseconds {
                stored.append(beat.offsetMilliseconds)
            }
            previous = beat.offsetMilliseconds
        }
        let offsetUnit = Unit.coarsest(for: stored)
        // The flagged beats, found as the decoder will see the offsets (rounded ones included).
        var flagged: [(index: Int, gap: Bool, offset: Int64?)] = []
        previous = 0.0
        for (index, beat) in beats.enumerated() {
            let implied = previous + rrUnit.milliseconds(rr[index])
            var offset: Int64?
            if implied != beat.offsetMilliseconds {
                let count = max(0, offsetUnit.count(beat.offsetMilliseconds))
                offset = count
                previous = offsetUnit.milliseconds(count)
            } else {
                previous = implied
            }
            if offset != nil || beat.precededByGap { flagged.append((index, beat.precededByGap, offset)) }
        }

        // At most 10 bytes a varint: the two counts, a word and an offset per flagged beat, an RR per beat.
        let capacity = 2 + 20 + flagged.count * 20 + rr.count * 10
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, written in
            var out = VarintWriter(buffer)
            out.byte(version)
            out.byte(rrUnit.rawValue | offsetUnit.rawValue << 4)
            out.unsigned(UInt64(beats.count))
            out.unsigned(UInt64(flagged.count))
            var previousIndex = -1
            for beat in flagged {
                let step = UInt64(beat.index - previousIndex - 1)
                out.unsigned(step << 2 | (beat.offset == nil ? 0 : 2) | (beat.gap ? 1 : 0))
                if let offset = beat.offset { out.unsigned(UInt64(offset)) }
                previousIndex = beat.index
            }
            var previousRR: Int64 = 0
            for value in rr {
                out.signed(value &- previousRR)
                previousRR = value
            }
            written = out.count
        }
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
        let flaggedCount = try reader.unsigned("flagged count")
        guard flaggedCount <= count else { throw reader.error("\(flaggedCount) flagged beats of \(count)") }
        var flags: [(gap: Bool, offset: Double?)] = Array(repeating: (false, nil), count: Int(count))
        var index = -1
        for _ in 0..<flaggedCount {
            let word = try reader.unsigned("flagged beat")
            guard word >> 2 < count else { throw reader.error("flagged beat after the last beat") }
            index += Int(word >> 2) + 1
            guard index < Int(count) else { throw reader.error("flagged beat \(index + 1) of \(count)") }
            var offset: Double?
            if word & 2 != 0 {
                let stored = try reader.unsigned("offset of beat \(index + 1)")
                guard stored <= 1 << 53 else { throw reader.error("offset of beat \(index + 1) out of range") }
                offset = offsetUnit.milliseconds(Int64(stored))
            }
            flags[index] = (word & 1 != 0, offset)
        }
        var beats: [Beat] = []
        beats.reserveCapacity(Int(count))
        var rr: Int64 = 0
        var offset = 0.0
        for index in 0..<Int(count) {
            let start = reader.offset
            rr = rr &+ (try reader.signed("RR of beat \(index + 1)"))
            let rrMilliseconds = rrUnit.milliseconds(rr)
            guard rrMilliseconds > 0 else {
                throw reader.error("beat \(index + 1) has RR interval \(rrMilliseconds) ms", at: start)
            }
            let next = flags[index].offset ?? offset + rrMilliseconds
            guard index == 0 || next > offset else {
                throw reader.error("beat \(index + 1) does not come after the one before", at: start)
            }
            offset = next
            beats.append(
                Beat(offsetMilliseconds: offset, rrMilliseconds: rrMilliseconds, precededByGap: flags[index].gap))
        }
        guard reader.isAtEnd else {
            throw reader.error("\(bytes.count - reader.offset) bytes after the last beat")
        }
        return beats
    }
}
