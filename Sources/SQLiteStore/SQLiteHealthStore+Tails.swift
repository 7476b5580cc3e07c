import Foundation
internal import StoreEngine

/// The tails of chunk streams, where a write tops up a stream's last chunk (SQLiteHealthStore+Series.swift).
///
/// A stream's tail is its latest chunk within ``SQLiteHealthStore/tailReach``, found along the (type, source, device,
/// end) index; the index does not hold the rest of the stream's key (subject, offset, metadata), so the search
/// visits every chunk of the device and type within reach. Streams whose metadata changes from sample to sample
/// (an SDNN with its RMSSD: a chunk of one sample each) made that a few dozen rows per stream, a sixth of saving
/// a replay's batches. Inside a write transaction the chunks within reach are therefore read once per device and
/// type (``TailList``), kept up to date by ``SQLiteHealthStore/write(_:key:replacing:)``, left behind as searches
/// move on in time, and forgotten at the end of the transaction (the write lock keeps other processes out
/// meanwhile). Memory stays bounded: a device and type with more than ``tailListCapacity`` chunks within reach is
/// searched through SQL as before, and all the lists together hold at most ``tailCacheBudget`` chunks.
extension SQLiteHealthStore {
    /// The chunks of one type, source and device.
    struct TailScope: Hashable {
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64

        init(_ key: StreamKey) {
            typeID = key.typeID
            sourceID = key.sourceID
            deviceID = key.deviceID
        }
    }

    /// A chunk as the search for a tail sees it.
    struct TailEntry {
        var id: Int64
        var subjectID: Int64
        var offset: Int64
        var metadata: String?
        var end: Int64
        var lastStart: Int64
        var count: Int
    }

    /// The chunks of a scope that end at `since` or later; `crowded` when there were too many to keep.
    struct TailList {
        var since: Int64
        var entries: [TailEntry]
        var crowded = false
    }

    /// A scope with more chunks than this within reach is not kept in memory: its tails are looked up one by one.
    static let tailListCapacity = 1_024
    /// The most chunks the lists of a transaction hold together; past it they are all dropped, and read again as
    /// they are needed (an import's transaction may write to many devices and types).
    static let tailCacheBudget = 16_384

    /// The latest chunk of `key`'s stream that ends at `since` or later, if there is one.
    func tail(of key: StreamKey, endingFrom since: Int64) throws -> TailEntry? {
        let scope = TailScope(key)
        if pendingSequence != nil, tails[scope]?.crowded != true {
            if var list = tails[scope], list.since <= since {
                tails[scope] = nil  // so that the list below is the only copy
                tailEntryCount -= list.entries.count
                let found = Self.latest(of: key, endingFrom: since, in: &list)
                keepTails(list, for: scope)
                return found
            }
            var list = try loadTails(scope, since: since)
            keepTails(list, for: scope)
            if !list.crowded { return Self.latest(of: key, endingFrom: since, in: &list) }
        }
        let query = try connection.cached(
            """
            SELECT id, last_start_ms, count, end_ms FROM series_chunks
            WHERE type_id = ?1 AND source_id = ?2 AND device_id = ?3 AND subject_id = ?4 AND start_offset_s = ?5
                AND metadata IS ?6 AND end_ms >= ?7
            ORDER BY end_ms DESC LIMIT 1
            """)
        try query.bind(1, key.typeID)
        try query.bind(2, key.sourceID)
        try query.bind(3, key.deviceID)
        try query.bind(4, key.subjectID)
        try query.bind(5, Int64(key.offset))
        try query.bind(6, key.metadata)
        try query.bind(7, since)
        guard try query.step() else { return nil }
        return TailEntry(
            id: query.int64(0), subjectID: key.subjectID, offset: Int64(key.offset), metadata: key.metadata,
            end: query.int64(3), lastStart: query.int64(1), count: Int(clamping: query.int64(2)))
    }

    /// Keeps `list` as `scope`'s, within ``tailCacheBudget``.
    private func keepTails(_ list: TailList, for scope: TailScope) {
        tailEntryCount += list.entries.count - (tails[scope]?.entries.count ?? 0)
        tails[scope] = list
        if tailEntryCount > Self.tailCacheBudget { forgetTails() }
    }

    /// Drops every list (at the end of a transaction, or when chunks went in ways the lists do not follow).
    func forgetTails() {
        tails.removeAll()
        tailEntryCount = 0
    }

    /// The chunks of `scope` that end at `since` or later (a crowded list when there are more than
    /// ``tailListCapacity``).
    private func loadTails(_ scope: TailScope, since: Int64) throws -> TailList {
        let query = try connection.cached(
            """
            SELECT id, subject_id, start_offset_s, metadata, end_ms, last_start_ms, count FROM series_chunks
            WHERE type_id = ?1 AND source_id = ?2 AND device_id = ?3 AND end_ms >= ?4
            """)
        try query.bind(1, scope.typeID)
        try query.bind(2, scope.sourceID)
        try query.bind(3, scope.deviceID)
        try query.bind(4, since)
        var entries: [TailEntry] = []
        while try query.step() {
            guard entries.count < Self.tailListCapacity else {
                query.reset()
                return TailList(since: since, entries: [], crowded: true)
            }
            entries.append(
                TailEntry(
                    id: query.int64(0), subjectID: query.int64(1), offset: query.int64(2), metadata: query.text(3),
                    end: query.int64(4), lastStart: query.int64(5), count: Int(clamping: query.int64(6))))
        }
        return TailList(since: since, entries: entries)
    }

    /// The entry the SQL search would find: of `key`'s stream, ending at `since` or later, the latest end (and of
    /// equal ends, the latest chunk). The chunks that end before `since` leave the list, which searches come to
    /// with later and later starts: it holds about the chunks within reach, not all those the transaction wrote.
    private static func latest(of key: StreamKey, endingFrom since: Int64, in list: inout TailList) -> TailEntry? {
        var best: TailEntry?
        let offset = Int64(key.offset)
        var stale = 0
        for entry in list.entries {
            guard entry.end >= since else {
                stale += 1
                continue
            }
            guard entry.subjectID == key.subjectID, entry.offset == offset, entry.metadata == key.metadata else {
                continue
            }
            if let found = best, (found.end, found.id) > (entry.end, entry.id) { continue }
            best = entry
        }
        // Left behind in batches, not one by one: each removal moves the rest of the list.
        if stale >= 64 || stale * 4 >= list.entries.count { list.entries.removeAll { $0.end < since } }
        list.since = since
        return best
    }

    /// Keeps the transaction's tails up to date after chunk `id` of `key` was written (`entry`) or deleted (`nil`).
    func noteChunk(_ id: Int64, of key: StreamKey, now entry: TailEntry?, replaced: Bool) {
        let scope = TailScope(key)
        guard var list = tails[scope], !list.crowded else { return }
        tails[scope] = nil  // so that the list below is the only copy
        tailEntryCount -= list.entries.count
        if replaced, let position = list.entries.firstIndex(where: { $0.id == id }) {
            list.entries.remove(at: position)
        }
        if let entry, entry.end >= list.since {
            if list.entries.count >= Self.tailListCapacity {
                list = TailList(since: list.since, entries: [], crowded: true)  // found by SQL from now on
            } else {
                list.entries.append(entry)
            }
        }
        keepTails(list, for: scope)
    }

    /// The points of chunk `id`.
    func chunkPoints(_ id: Int64) throws -> [SeriesChunkCodec.Point] {
        let query = try connection.cached("SELECT data FROM series_chunks WHERE id = ?1")
        try query.bind(1, id)
        guard try query.step() else {
            throw SQLiteError(code: 11, operation: "read", message: "series chunk \(id) is gone")
        }
        return try SeriesChunkCodec.decode(query.blob(0) ?? [])
    }
}
