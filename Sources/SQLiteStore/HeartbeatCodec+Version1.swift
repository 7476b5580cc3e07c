import Health
internal import StoreEngine

/// Version 1 of the beats blob, written by schema 6 and 7 stores: each beat a varint of
/// `zigzag(RR delta) << 2 | offset follows << 1 | gap`, then its offset when flagged; units 0 = 1/1024 s,
/// 1 = 1 ms, 2 = 1 µs. Read only to rewrite a store's blobs in the current version when it migrates to schema 8.
extension HeartbeatCodec {
    static func decodeVersion1(_ bytes: [UInt8]) throws(SeriesChunkError) -> [Beat] {
        var reader = VarintReader(bytes, blob: "heartbeat series beats (version 1)")
        let version = try reader.byte("version")
        guard version == 1 else { throw reader.error("unknown version \(version)", at: 0) }
        let units = try reader.byte("units")
        func milliseconds(_ count: Int64, _ unit: UInt8) -> Double {
            switch unit {
            case 0: Double(count) * 0.976_562_5
            case 1: Double(count)
            default: Double(count) / 1_000
            }
        }
        let rrUnit = units & 0x0F
        let offsetUnit = units >> 4
        guard rrUnit <= 2, offsetUnit <= 2 else { throw reader.error("unknown units \(units)", at: 1) }
        let count = try reader.unsigned("count")
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
            let rrMilliseconds = milliseconds(rr, rrUnit)
            guard rrMilliseconds > 0 else {
                throw reader.error("beat \(index + 1) has RR interval \(rrMilliseconds) ms", at: start)
            }
            var next = offset + rrMilliseconds
            if word & 2 != 0 {
                let stored = try reader.unsigned("offset of beat \(index + 1)")
                guard stored <= 1 << 53 else { throw reader.error("offset of beat \(index + 1) out of range") }
                next = milliseconds(Int64(stored), offsetUnit)
            }
            guard index == 0 || next > offset else {
                throw reader.error("beat \(index + 1) does not come after the one before", at: start)
            }
            offset = next
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rrMilliseconds, precededByGap: word & 1 != 0))
        }
        guard reader.isAtEnd else { throw reader.error("\(bytes.count - reader.offset) bytes after the last beat") }
        return beats
    }
}

extension SQLiteSchema {
    /// Rewrites every version 1 beats blob in the current version (migration 8). A blob that does not decode is
    /// left as it is: reading that series then fails with a clear error, and the other series migrate.
    static func upgradeHeartbeatBlobs(on connection: SQLiteConnection) throws {
        let select = try connection.prepare("SELECT id, beats FROM heartbeat_series WHERE substr(beats, 1, 1) = x'01'")
        var upgraded: [(Int64, [UInt8])] = []
        while try select.step() {
            guard let beats = try? HeartbeatCodec.decodeVersion1(select.blob(1) ?? []) else { continue }
            upgraded.append((select.int64(0), HeartbeatCodec.encode(beats)))
        }
        let update = try connection.prepare("UPDATE heartbeat_series SET beats = ?1 WHERE id = ?2")
        for (id, beats) in upgraded {
            update.reset()
            try update.bind(1, beats)
            try update.bind(2, id)
            try update.step()
        }
    }
}
