import Foundation
import Health
internal import StoreEngine

/// Dense series: owner-written discrete samples whose id derives from their natural key live in chunks
/// (``SeriesChunkCodec``), a few bytes a sample, instead of a row and four index entries each.
extension SQLiteHealthStore {
    /// Points per chunk: about 17 minutes of 1 Hz heart rate.
    static let chunkCapacity = 1_024
    /// How far back (ms) a stream's last chunk may end and still be topped up; older tails get a new chunk.
    static let tailReach: Int64 = 3_600_000

    /// The chunk a sample belongs to: everything its points share.
    struct StreamKey: Hashable {
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64
        var subjectID: Int64
        var offset: Int32
        var metadata: String?
        /// Whether the type is discrete (its chunks feed the rollups); follows from `typeID`.
        var discrete = true
        /// Whether the type is cumulative (its chunks feed the cumulative rollups); follows from `typeID`.
        var cumulative = false
    }

    /// One decoded chunk and its stream.
    struct Chunk {
        var id: Int64
        var key: StreamKey
        var points: [SeriesChunkCodec.Point]
        var lastStart: Int64
    }

    /// A write's samples bound for chunks, grouped by stream, column by column: times, values and where each
    /// one's outcome goes in the batch.
    struct StreamGroups {
        struct Columns {
            var starts: [Int64] = []
            var ends: [Int64] = []
            var values: [Double] = []
            var positions: [Int] = []
        }
        private(set) var keys: [StreamKey] = []
        private(set) var columns: [Columns] = []
        private var index: [StreamKey: Int] = [:]

        private mutating func slot(_ key: StreamKey) -> Int {
            if let found = index[key] { return found }
            keys.append(key)
            columns.append(Columns())
            index[key] = keys.count - 1
            return keys.count - 1
        }

        mutating func append(_ key: StreamKey, start: Int64, end: Int64, value: Double, position: Int) {
            let slot = slot(key)
            columns[slot].starts.append(start)
            columns[slot].ends.append(end)
            columns[slot].values.append(value)
            columns[slot].positions.append(position)
        }

        /// Adds a whole stream whose samples' outcomes go at `firstPosition` onwards.
        mutating func append(_ key: StreamKey, _ series: QuantitySeries, firstPosition: Int) {
            let slot = slot(key)
            if columns[slot].starts.isEmpty {
                columns[slot] = Columns(
                    starts: series.starts, ends: series.ends, values: series.values,
                    positions: Array(firstPosition..<firstPosition + series.count))
            } else {
                columns[slot].starts += series.starts
                columns[slot].ends += series.ends
                columns[slot].values += series.values
                columns[slot].positions += firstPosition..<firstPosition + series.count
            }
        }
    }

    /// Whether `sample` (of the catalog's `type`), written by `caller`, goes into a chunk rather than a row: the
    /// owner's samples with ids derived from their natural key and no client id, of any quantity type.
    func isSeriesSample(_ sample: QuantitySample, _ type: HealthType, _ caller: Caller) -> Bool {
        caller == .owner && type.aggregation != .series && Self.externalID(sample) == nil && sample.hasDerivedID
    }

    /// Saves every stream of `streams` (already validated), writing each sample's outcome into `outcomes`.
    /// With `sequenceBase`, the sample at batch position i gets sequence number `sequenceBase + 1 + i` (numbers
    /// the caller reserved); otherwise each stream's inserted samples take the next numbers in turn.
    func saveSeries(_ streams: StreamGroups, into outcomes: inout [WriteOutcome], sequenceBase: Int64? = nil) throws {
        for (key, columns) in zip(streams.keys, streams.columns) {
            try saveSeries(columns, key: key, into: &outcomes, sequenceBase: sequenceBase)
        }
    }

    /// Saves one stream's samples.
    ///
    /// The samples are walked in natural-key order against what is already stored under the same keys (in
    /// chunks of any subject, and in rows), so duplicates and conflicts are found without hashing each sample.
    private func saveSeries(
        _ columns: StreamGroups.Columns, key: StreamKey, into outcomes: inout [WriteOutcome], sequenceBase: Int64?
    ) throws {
        let count = columns.starts.count
        guard count > 0 else { return }
        let starts = columns.starts
        let ends = columns.ends
        var sorted = true
        for index in 1..<max(count, 1) where (starts[index - 1], ends[index - 1]) > (starts[index], ends[index]) {
            sorted = false
            break
        }
        // The walk's order: as given when sorted by natural key (the gateway's streams are), else sorted.
        let order = sorted ? nil : (0..<count).sorted { (starts[$0], ends[$0]) < (starts[$1], ends[$1]) }
        let minStart = starts[order?.first ?? 0]
        let maxEnd = ends.max() ?? minStart

        // What is already stored under these natural keys (by any version of the source), sorted by key.
        var stored: [(start: Int64, end: Int64, value: Double, subjectID: Int64)] = []
        for chunk in try chunks(
            typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, from: minStart, to: maxEnd,
            anyVersion: true)
        {
            for point in chunk.points where point.start >= minStart && point.start + point.duration <= maxEnd {
                stored.append((point.start, point.start + point.duration, point.value, chunk.key.subjectID))
            }
        }
        let rowLookup = try connection.cached(
            """
            SELECT start_ms, end_ms, value, subject_id FROM samples
            WHERE type_id = ?1 AND \(try sourceCondition(key.sourceID, 2)) AND device_id = ?3
                AND start_ms BETWEEN ?4 AND ?5 AND external_uuid IS NULL
            """)
        try rowLookup.bind(1, key.typeID)
        try rowLookup.bind(2, key.sourceID)
        try rowLookup.bind(3, key.deviceID)
        try rowLookup.bind(4, minStart)
        try rowLookup.bind(5, maxEnd)
        while try rowLookup.step() {
            stored.append((rowLookup.int64(0), rowLookup.int64(1), rowLookup.double(2), rowLookup.int64(3)))
        }
        if !stored.isEmpty { stored.sort { ($0.start, $0.end) < ($1.start, $1.end) } }

        var accepted: [SeriesChunkCodec.Point] = []
        accepted.reserveCapacity(count)
        var cursor = 0
        var previous: (start: Int64, end: Int64, value: Double)?
        var bucket: Int64?  // rollups: the quarter hour being accumulated, handed over when the walk leaves it
        var aggregate = RollupValue()
        var sequence = try lastSequence()
        let values = columns.values
        let positions = columns.positions
        func visit(_ index: Int) {
            let start = starts[index]
            let end = ends[index]
            let value = values[index]
            let position = positions[index]
            if cursor < stored.count {
                while cursor < stored.count, (stored[cursor].start, stored[cursor].end) < (start, end) { cursor += 1 }
                if cursor < stored.count, stored[cursor].start == start, stored[cursor].end == end {
                    let match = stored[cursor]
                    outcomes[position] =
                        match.value == value && match.subjectID == key.subjectID ? .duplicate : .conflict
                    return
                }
            }
            if let previous, previous.start == start, previous.end == end {  // the same key twice in one batch
                outcomes[position] = previous.value == value ? .duplicate : .conflict
                return
            }
            previous = (start, end, value)
            outcomes[position] = .inserted
            let seq: Int64
            if let sequenceBase {
                seq = sequenceBase + 1 + Int64(position)
            } else {
                sequence += 1
                seq = sequence
            }
            accepted.append(SeriesChunkCodec.Point(start: start, duration: end - start, value: value, seq: seq))
            if key.cumulative {
                cumulativeChanges.inserted(
                    typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, subjectID: key.subjectID,
                    start: start, end: end, value: value, seq: seq)
            }
            guard key.discrete else { return }
            let quarter = Rollup.bucket(start)
            if quarter != bucket {
                if let bucket { mergeRollup(key, bucket: bucket, aggregate) }
                bucket = quarter
                aggregate = RollupValue()
            }
            aggregate.add(start: start, end: end, value: value)
        }
        if let order {
            for index in order { visit(index) }
        } else {
            for index in 0..<count { visit(index) }
        }
        if let bucket { mergeRollup(key, bucket: bucket, aggregate) }
        if sequenceBase == nil { try reserveSequence(through: sequence) }
        try append(accepted, to: key)
    }

    private func mergeRollup(_ key: StreamKey, bucket: Int64, _ value: RollupValue) {
        let rollupKey = RollupKey(
            typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, subjectID: key.subjectID, bucket: bucket
        )
        pendingRollups[rollupKey, default: RollupValue()].merge(value)
    }

    /// Adds points (sorted, all new) to the stream: onto its last chunk when they all come after it, else into
    /// new chunks.
    private func append(_ points: [SeriesChunkCodec.Point], to key: StreamKey) throws {
        guard let first = points.first else { return }
        var pending = points[...]
        // The tail: the stream's latest chunk, only within ``tailReach`` (streams whose metadata changes from sample
        // to sample, like SDNN with its RMSSD, have no tail: the search must not visit all their chunks), found
        // through the transaction's list of the device's chunks (SQLiteHealthStore+Tails.swift). It is topped up
        // (decoded and written again) when all the new points fit, or while it is less than half full; a large
        // write that would only fill its last few places starts a chunk of its own instead.
        if let tail = try tail(of: key, endingFrom: first.start - Self.tailReach), tail.count < Self.chunkCapacity,
            tail.lastStart < first.start,
            points.count <= Self.chunkCapacity - tail.count || tail.count < Self.chunkCapacity / 2
        {
            var points = try chunkPoints(tail.id)
            let room = Self.chunkCapacity - points.count
            points += pending.prefix(room)
            pending = pending.dropFirst(room)
            try write(points, key: key, replacing: tail.id)
        }
        while !pending.isEmpty {
            try write(Array(pending.prefix(Self.chunkCapacity)), key: key, replacing: nil)
            pending = pending.dropFirst(Self.chunkCapacity)
        }
    }

    /// Writes a chunk's points (sorted by start), as a new chunk or over chunk `id`; an empty list deletes it.
    func write(_ points: [SeriesChunkCodec.Point], key: StreamKey, replacing id: Int64?) throws {
        guard let first = points.first, let last = points.last else {
            if let id {
                let delete = try connection.cached("DELETE FROM series_chunks WHERE id = ?1")
                try delete.bind(1, id)
                try delete.step()
                noteChunk(id, of: key, now: nil, replaced: true)
            }
            return
        }
        let statement = try connection.cached(
            """
            INSERT OR REPLACE INTO series_chunks (id, type_id, source_id, device_id, subject_id, start_ms, end_ms,
                last_start_ms, count, start_offset_s, metadata, last_seq, data)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """)
        if let id { try statement.bind(1, id) } else { try statement.bindNull(1) }
        try statement.bind(2, key.typeID)
        try statement.bind(3, key.sourceID)
        try statement.bind(4, key.deviceID)
        try statement.bind(5, key.subjectID)
        try statement.bind(6, first.start)
        let end = points.map { $0.start + $0.duration }.max() ?? last.start
        try statement.bind(7, end)
        try statement.bind(8, last.start)
        try statement.bind(9, Int64(points.count))
        try statement.bind(10, Int64(key.offset))
        try statement.bind(11, key.metadata)
        try statement.bind(12, points.map(\.seq).max() ?? 0)
        try statement.bind(13, SeriesChunkCodec.encode(points))
        try statement.step()
        let written = id ?? connection.lastInsertRowID
        noteChunk(
            written, of: key,
            now: TailEntry(
                id: written, subjectID: key.subjectID, offset: Int64(key.offset), metadata: key.metadata, end: end,
                lastStart: last.start, count: points.count),
            replaced: id != nil)
        // The longest span a chunk has bounds searches for chunks by time (deletion by id, time ranges).
        try raiseSpan(.chunk, to: end - first.start)
    }

    /// The chunks of one (type, source, device) that may hold a point starting in `[from, to]` (a chunk whose
    /// last point starts before `from` is left out: the previous chunk of a stream of intervals ends exactly
    /// where the next batch starts, and would be decoded for nothing); with `anyVersion`, those of every version
    /// of the source as well (``sourceCondition(_:_:)``), each with its own source id. The index is named: with
    /// several sources SQLite's planner, without statistics, took the index by time and read every chunk of the type.
    func chunks(typeID: Int64, sourceID: Int64, deviceID: Int64, from: Int64, to: Int64, anyVersion: Bool = false)
        throws -> [Chunk]
    {
        let statement = try connection.cached(
            """
            SELECT id, subject_id, start_offset_s, metadata, last_start_ms, data, source_id
            FROM series_chunks INDEXED BY series_chunks_stream
            WHERE type_id = ?1 AND \(anyVersion ? try sourceCondition(sourceID, 2) : "source_id = ?2")
                AND device_id = ?3 AND end_ms >= ?4 AND start_ms <= ?5 AND last_start_ms >= ?4
            """)
        try statement.bind(1, typeID)
        try statement.bind(2, sourceID)
        try statement.bind(3, deviceID)
        try statement.bind(4, from)
        try statement.bind(5, to)
        var result: [Chunk] = []
        while try statement.step() {
            let key = StreamKey(
                typeID: typeID, sourceID: statement.int64(6), deviceID: deviceID, subjectID: statement.int64(1),
                offset: Int32(clamping: statement.int64(2)), metadata: statement.text(3))
            result.append(
                Chunk(
                    id: statement.int64(0), key: key, points: try SeriesChunkCodec.decode(statement.blob(5) ?? []),
                    lastStart: statement.int64(4)))
        }
        return result
    }
}

extension SQLiteHealthStore {
    /// The chunked samples of `type` that meet `[from, to]` and pass the filters, as rows; with a cursor, only
    /// those after it, and with a limit, stopping once no further chunk can hold a closer sample.
    func seriesRows(
        of type: HealthType, typeID: Int64, from: Instant?, to: Instant?, sources: [String]?, devices: [String]?,
        subjects: [String]?, caller: Caller, after cursor: SampleCursor?, order: SampleOrder, limit: Int?
    ) throws -> [Row] {
        // Chunks hold owner-written samples only: an app without read permission sees none of them.
        if case .app = caller, try !canRead(caller, type) { return [] }
        let statement = try seriesStatement(
            typeID: typeID, from: from, to: to, sources: sources, devices: devices, subjects: subjects, after: cursor,
            order: order)
        let ascending = order.keys[0].ascending
        var rows: [Row] = []
        while try statement.step() {
            if let limit, rows.count >= limit {
                // Rows are sorted below; can this chunk still hold one of the first `limit`?
                rows.sort { Self.precedes($0.sample, $1.sample, order) }
                rows.removeLast(rows.count - limit)
                let last = rows[limit - 1].sample
                // Chunks come by start: every sample of a chunk starting after the boundary comes after the last
                // one kept, whichever key leads; descending, every sample of this chunk and of those after it ends
                // before the boundary once this chunk's start plus the longest span a chunk has is before it.
                let boundary = order.leadingValue(start: last.start, end: last.end).milliseconds
                if Self.chunkIsPast(boundary, statement, ascending: ascending) { break }
            }
            let stream = Self.chunkStream(statement, type: type)
            for point in try SeriesChunkCodec.decode(statement.blob(4) ?? []) {
                let end = point.start + point.duration
                if let from, end < from.milliseconds { continue }
                if let to, point.start > to.milliseconds { continue }
                let sample = QuantitySample(
                    type: type, start: Instant(milliseconds: point.start), end: Instant(milliseconds: end),
                    startOffsetSeconds: stream.startOffsetSeconds, value: point.value, source: stream.source,
                    device: stream.device, subject: stream.subject, metadata: stream.metadata)
                if let cursor, !order.follows((sample.start, sample.end, sample.id.bytes), cursor: cursor) {
                    continue
                }
                rows.append(Row(sample: sample, seq: point.seq, writer: Caller.owner.description))
            }
        }
        return rows
    }

    /// The chunks of `typeID` that may hold a sample meeting `[from, to]` after `cursor` and passing the filters,
    /// by start in the direction of the order's first key (columns: start, end, offset, metadata, data, the
    /// source's identifier and version, the device id and its eight fields, the subject, the device key, the
    /// longest span a chunk has, the source and subject ids).
    func seriesStatement(
        typeID: Int64, from: Instant?, to: Instant?, sources: [String]?, devices: [String]?, subjects: [String]?,
        after cursor: SampleCursor?, order: SampleOrder
    ) throws -> SQLiteStatement {
        var lower = from?.milliseconds ?? .min
        var upper = to?.milliseconds ?? .max
        // Rows after the cursor lie beyond its first key's value. A chunk holds its samples' starts and ends, so
        // bounding its end from below (or its start from above) by that value keeps every chunk that can hold one.
        let ascending = order.keys[0].ascending
        if let cursor {
            let leading = order.leadingValue(start: cursor.start, end: cursor.end).milliseconds
            if ascending {
                lower = max(lower, leading)
            } else {
                upper = min(upper, leading)
            }
        }
        var conditions = SQLConditions()
        conditions.add(
            "c.type_id = ? AND c.end_ms >= ? AND c.start_ms <= ?", [.integer(typeID), .integer(lower), .integer(upper)])
        if lower > .min {
            // A lower bound on the start too, so that the (type, start) index is read from the range on, not from
            // the beginning of the stream's history: no chunk spans more than `chunk_span` (read in the same
            // statement, so that a longer chunk committed meanwhile by another process is not missed).
            conditions.add(
                "c.start_ms >= ? - (SELECT value FROM counters WHERE name = 'chunk_span')", [.integer(lower)])
        }
        conditions.add("so.identifier", in: sources)
        conditions.add("d.key", in: devices)
        conditions.add("sj.name", in: subjects)
        return try conditions.prepare(
            """
            SELECT c.start_ms, c.end_ms, c.start_offset_s, c.metadata, c.data, so.identifier, so.version, c.device_id,
                d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id, sj.name, d.key,
                (SELECT value FROM counters WHERE name = 'chunk_span'), c.source_id, c.subject_id
            FROM series_chunks c
            JOIN sources so ON so.id = c.source_id
            LEFT JOIN devices d ON d.id = c.device_id
            LEFT JOIN subjects sj ON sj.id = c.subject_id
            WHERE \(conditions.sql)
            """
                // By start either way, so that the (type, start) index gives the order: sorting by end made SQLite
                // sort every chunk of the range, its data included, through temporary files.
                + (ascending ? " ORDER BY c.start_ms ASC" : " ORDER BY c.start_ms DESC"), on: connection)
    }

    /// Whether no sample of the chunk at `statement` (``seriesStatement(typeID:from:to:sources:devices:subjects:after:order:)``),
    /// nor of any chunk after it, can come before a sample whose leading key is `boundary`.
    static func chunkIsPast(_ boundary: Int64, _ statement: SQLiteStatement, ascending: Bool) -> Bool {
        let start = statement.int64(0)
        return ascending ? start > boundary : start.addingReportingOverflow(statement.int64(18)).partialValue < boundary
    }

    /// What the samples of the chunk at `statement` share: type, offset, source, device, subject and metadata.
    static func chunkStream(_ statement: SQLiteStatement, type: HealthType) -> QuantitySeries {
        let version = statement.text(6) ?? ""
        return QuantitySeries(
            type: type, startOffsetSeconds: Int32(clamping: statement.int64(2)),
            source: Source(identifier: statement.text(5) ?? "", version: version.isEmpty ? nil : version),
            device: statement.int64(7) == 0 ? nil : Self.readDevice(statement, from: 8), subject: statement.text(16),
            metadata: MetadataCoding.decode(statement.text(3)))
    }

    /// The sample order of queries (``SampleOrder``).
    static func precedes(_ lhs: QuantitySample, _ rhs: QuantitySample, _ order: SampleOrder) -> Bool {
        order.precedes((lhs.start, lhs.end, lhs.id.bytes), (rhs.start, rhs.end, rhs.id.bytes))
    }
}

extension SQLiteHealthStore {
    /// Chunked samples of `typeID` written after `anchor`, oldest first (for ``changes(of:since:limit:as:)``).
    func seriesChanges(of type: HealthType, typeID: Int64, after anchor: Int64) throws -> [Row] {
        let statement = try connection.prepare(
            """
            SELECT c.id FROM series_chunks c WHERE c.type_id = ?1 AND c.last_seq > ?2 ORDER BY c.last_seq
            """)
        try statement.bind(1, typeID)
        try statement.bind(2, anchor)
        var rows: [Row] = []
        while try statement.step() {
            guard let chunk = try chunk(id: statement.int64(0)) else { continue }
            let prototype = try seriesSamplePrototype(chunk)
            for point in chunk.points where point.seq > anchor {
                var sample = prototype
                sample.start = Instant(milliseconds: point.start)
                sample.end = Instant(milliseconds: point.start + point.duration)
                sample.value = point.value
                sample.id = QuantitySample.derivedID(
                    type: type.identifier, source: sample.source.identifier, device: sample.device?.key,
                    start: sample.start, end: sample.end)
                rows.append(Row(sample: sample, seq: point.seq, writer: Caller.owner.description))
            }
        }
        return rows.sorted { $0.seq < $1.seq }
    }

    /// Where the chunked sample `id` is, if there is one: its id starts with its start time, which finds the
    /// chunks to look in (no further back than the longest span a chunk has). Returns the chunk, the point's
    /// position in it and the sample the point is.
    private func chunkedPoint(_ id: UUID) throws -> (chunk: Chunk, position: Int, sample: QuantitySample)? {
        let start = id.bytes.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let span = try connection.scalarInt("SELECT value FROM counters WHERE name = 'chunk_span'") ?? 0
        let candidates = try connection.cached(
            """
            SELECT id FROM series_chunks
            WHERE type_id IN (SELECT id FROM types) AND start_ms BETWEEN ?2 AND ?1 AND last_start_ms >= ?1
            """)
        try candidates.bind(1, start)
        try candidates.bind(2, start - span)
        var chunkIDs: [Int64] = []
        while try candidates.step() { chunkIDs.append(candidates.int64(0)) }
        for chunkID in chunkIDs {
            guard let chunk = try chunk(id: chunkID) else { continue }
            var sample = try seriesSamplePrototype(chunk)
            for (position, point) in chunk.points.enumerated() where point.start == start {
                sample.start = Instant(milliseconds: point.start)
                sample.end = Instant(milliseconds: point.start + point.duration)
                sample.value = point.value
                sample.id = QuantitySample.derivedID(
                    type: sample.type.identifier, source: sample.source.identifier, device: sample.device?.key,
                    start: sample.start, end: sample.end)
                if sample.id == id { return (chunk, position, sample) }
            }
        }
        return nil
    }

    /// Deletes the chunked sample `id`, if there is one. Returns whether it was found.
    func deleteSeriesSample(_ id: UUID, writer: String) throws -> Bool {
        guard let found = try chunkedPoint(id) else { return false }
        var chunk = found.chunk
        chunk.points.remove(at: found.position)
        try write(chunk.points, key: chunk.key, replacing: chunk.id)
        switch try aggregation(typeID: chunk.key.typeID) {
        case .discrete:
            noteRemoved(
                typeID: chunk.key.typeID, sourceID: chunk.key.sourceID, deviceID: chunk.key.deviceID,
                subjectID: chunk.key.subjectID, start: found.sample.start.milliseconds)
        case .cumulative:
            cumulativeChanges.removed(
                typeID: chunk.key.typeID, sourceID: chunk.key.sourceID, deviceID: chunk.key.deviceID,
                subjectID: chunk.key.subjectID, start: found.sample.start.milliseconds,
                end: found.sample.end.milliseconds)
        default:
            break
        }
        try tombstone(uuid: id.bytes, typeID: chunk.key.typeID, writer: writer, replacedBy: nil)
        return true
    }

    /// The chunked sample `id`, if there is one.
    func seriesSample(_ id: UUID) throws -> QuantitySample? {
        try chunkedPoint(id)?.sample
    }

    func chunk(id: Int64) throws -> Chunk? {
        let statement = try connection.cached(
            """
            SELECT type_id, source_id, device_id, subject_id, start_offset_s, metadata, last_start_ms, data
            FROM series_chunks WHERE id = ?1
            """)
        try statement.bind(1, id)
        guard try statement.step() else { return nil }
        let key = StreamKey(
            typeID: statement.int64(0), sourceID: statement.int64(1), deviceID: statement.int64(2),
            subjectID: statement.int64(3), offset: Int32(clamping: statement.int64(4)), metadata: statement.text(5))
        let points = try SeriesChunkCodec.decode(statement.blob(7) ?? [])
        return Chunk(id: id, key: key, points: points, lastStart: statement.int64(6))
    }

    /// A sample carrying a chunk's shared fields (type, source, device, subject, offset, metadata).
    private func seriesSamplePrototype(_ chunk: Chunk) throws -> QuantitySample {
        let statement = try connection.cached(
            """
            SELECT t.identifier, so.identifier, so.version, d.name, d.manufacturer, d.model, d.hardware, d.firmware,
                d.software, d.serial, d.local_id, sj.name
            FROM types t JOIN sources so ON so.id = ?2
            LEFT JOIN devices d ON d.id = ?3 LEFT JOIN subjects sj ON sj.id = ?4
            WHERE t.id = ?1
            """)
        try statement.bind(1, chunk.key.typeID)
        try statement.bind(2, chunk.key.sourceID)
        try statement.bind(3, chunk.key.deviceID)
        try statement.bind(4, chunk.key.subjectID)
        guard try statement.step(), let type = HealthTypeCatalog.type(statement.text(0) ?? "") else {
            throw SQLiteError(code: 11, operation: "read", message: "chunk \(chunk.id) names an unknown type or source")
        }
        let version = statement.text(2) ?? ""
        let device = chunk.key.deviceID == 0 ? nil : Self.readDevice(statement, from: 3)
        return QuantitySample(
            id: UUID(), type: type, start: Instant(milliseconds: 0), end: Instant(milliseconds: 0),
            startOffsetSeconds: chunk.key.offset, value: 0,
            source: Source(identifier: statement.text(1) ?? "", version: version.isEmpty ? nil : version),
            device: device,
            subject: statement.text(11), metadata: MetadataCoding.decode(chunk.key.metadata))
    }
}
