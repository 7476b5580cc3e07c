internal import Foundation
public import Health
internal import StoreEngine

/// ``HealthStoreEngine/sampleColumns(_:as:)``: the samples of ``samples(_:as:)``, read into columns. A chunk's points
/// go straight into the page (their ids derived from their times and the stream's hash, taken once per stream);
/// rows and chunks name their streams by the ids they store, so that a stream's strings and metadata are read once a
/// call, not once a sample.
extension SQLiteHealthStore {
    /// The most samples one read of rows and chunks takes before the time test (a page with a larger limit, or none,
    /// takes several).
    static let columnsFetch = 65_536

    public func sampleColumns(_ query: SampleQuery, as caller: Caller) throws -> SampleColumns {
        // The workout and metadata predicates need each sample's membership and metadata: read as samples.
        guard query.workout == nil, query.metadata.isEmpty else { return SampleColumns(try samples(query, as: caller)) }
        defer { connection.resetCachedStatements() }
        let wanted = query.limit ?? Int.max
        var page = SampleColumns()
        var streams = ColumnStreams(type: query.type)
        if wanted > 0, let typeID = try existingTypeID(query.type.identifier) {
            var cursor = query.cursor
            while page.count < wanted {
                let limit = min(wanted - page.count, Self.columnsFetch)
                let fetched = try fetchColumns(
                    query, typeID: typeID, caller: caller, after: cursor, limit: limit, streams: &streams)
                let matching = (0..<fetched.count).filter {
                    query.matchesTime(
                        start: Instant(milliseconds: fetched.starts[$0]), end: Instant(milliseconds: fetched.ends[$0]))
                }
                if matching.count == fetched.count {
                    // A whole export: every sample matches.
                    if page.isEmpty { page = fetched } else { page.append(contentsOf: fetched) }
                } else {
                    for index in matching {
                        page.append(
                            id: fetched.ids[index], stream: fetched.streamIndices[index], start: fetched.starts[index],
                            end: fetched.ends[index], value: fetched.values[index])
                    }
                }
                guard fetched.count == limit, let last = fetched.last else { break }
                cursor = SampleCursor(start: last.start, end: last.end, id: last.id.uuidString)
            }
        }
        try log(caller, .query, type: query.type.identifier, count: page.count, denied: false)
        page.streams = streams.streams
        page.next = SampleCursor.following(matched: page.count, wanted: wanted, last: page.last)
        return page
    }

    /// The streams of one call, numbered as they are met, by the ids their rows and chunks store.
    struct ColumnStreams {
        struct Key: Hashable {
            var sourceID: Int64
            var deviceID: Int64
            var subjectID: Int64
            var offset: Int64
            var metadata: String?
        }

        let type: HealthType
        private(set) var streams: [QuantitySeries] = []
        /// Per stream: the hash its samples' derived ids start from.
        private(set) var derived: [DerivedIDStream] = []
        private var index: [Key: Int32] = [:]

        init(type: HealthType) {
            self.type = type
        }

        /// The number of the stream `key` names, made with `make` the first time.
        mutating func number(_ key: Key, _ make: () -> QuantitySeries) -> Int32 {
            if let found = index[key] { return found }
            let stream = make()
            let number = Int32(streams.count)
            streams.append(stream)
            derived.append(
                DerivedIDStream(type: type.identifier, source: stream.source.identifier, device: stream.device?.key))
            index[key] = number
            return number
        }
    }

    /// The first `limit` samples after `cursor` in the query's order, of rows and chunks together, before the time
    /// test: what one page of ``rows(of:from:to:sources:devices:subjects:caller:after:order:limit:notStartingBefore:)``
    /// holds, column by column.
    private func fetchColumns(
        _ query: SampleQuery, typeID: Int64, caller: Caller, after cursor: SampleCursor?, limit: Int,
        streams: inout ColumnStreams
    ) throws -> SampleColumns {
        let order = query.order
        var rows = SampleColumns()
        let statement = try rowStatement(
            type: query.type, typeID: typeID, from: query.from, to: query.to, sources: query.sources,
            devices: query.devices, subjects: query.subjects, caller: caller, after: cursor, order: order,
            limit: limit)
        while try statement.step() {
            guard let id = statement.blob(0).flatMap(UUID.init(bytes:)) else { continue }
            let key = ColumnStreams.Key(
                sourceID: statement.int64(20), deviceID: statement.int64(7), subjectID: statement.int64(21),
                offset: statement.int64(3), metadata: statement.text(17))
            let stream = streams.number(key) { Self.rowStream(statement, type: query.type) }
            rows.append(
                id: id, stream: stream, start: statement.int64(1), end: statement.int64(2), value: statement.double(4))
        }
        var points = try seriesColumns(query, typeID: typeID, caller: caller, after: cursor, limit: limit, &streams)
        guard !rows.isEmpty else {
            points.sort(by: order, limit: limit)
            return points
        }
        // Rows come sorted by the statement; both sorted together, cut at the limit.
        rows.append(contentsOf: points)
        rows.sort(by: order, limit: limit)
        return rows
    }

    /// The chunked samples of a fetch (``fetchColumns``), as ``seriesRows(of:typeID:from:to:sources:devices:subjects:caller:after:order:limit:)``
    /// reads them, column by column: sorted and cut at `limit` when there are more.
    private func seriesColumns(
        _ query: SampleQuery, typeID: Int64, caller: Caller, after cursor: SampleCursor?, limit: Int,
        _ streams: inout ColumnStreams
    ) throws -> SampleColumns {
        let type = query.type
        if case .app = caller, try !canRead(caller, type) { return SampleColumns() }
        let order = query.order
        let statement = try seriesStatement(
            typeID: typeID, from: query.from, to: query.to, sources: query.sources, devices: query.devices,
            subjects: query.subjects, after: cursor, order: order)
        let ascending = order.keys[0].ascending
        let from = query.from?.milliseconds ?? .min
        let to = query.to?.milliseconds ?? .max
        let after = cursor.map { (start: $0.start.milliseconds, end: $0.end.milliseconds, id: UUID(uuidString: $0.id)) }
        let comparison = SampleOrder.Comparison(order)
        var points = SampleColumns()
        while try statement.step() {
            if points.count >= limit {
                // Can this chunk still hold one of the first `limit`? (as in seriesRows)
                points.sort(by: order, limit: limit)
                let last = points.count - 1
                let boundary = order.keys[0].key == .start ? points.starts[last] : points.ends[last]
                if Self.chunkIsPast(boundary, statement, ascending: ascending) { break }
            }
            let key = ColumnStreams.Key(
                sourceID: statement.int64(19), deviceID: statement.int64(7), subjectID: statement.int64(20),
                offset: statement.int64(2), metadata: statement.text(3))
            let stream = streams.number(key) { Self.chunkStream(statement, type: type) }
            let derived = streams.derived[Int(stream)]
            let chunk = try SeriesChunkCodec.decodeColumns(statement.blob(4) ?? [])
            let starts = chunk.starts
            var ends = starts
            for index in ends.indices {
                let (end, overflow) = starts[index].addingReportingOverflow(chunk.durations[index])
                guard !overflow else {
                    throw SeriesChunkError(offset: 0, reason: "point \(index + 1) ends past the largest time")
                }
                ends[index] = end
            }
            let ids = starts.indices.map { derived.id(start: starts[$0], end: ends[$0]) }
            let kept = starts.indices.filter { index in
                ends[index] >= from && starts[index] <= to
                    && (after.map { comparison.precedes($0, (starts[index], ends[index], ids[index])) } ?? true)
            }
            // Room for a fetch and the chunk that goes past it (reserving per chunk would copy every time).
            if points.isEmpty { points.reserveCapacity(limit + Self.chunkCapacity) }
            if kept.count == starts.count {
                points.append(stream: stream, ids: ids, starts: starts, ends: ends, values: chunk.values)
            } else {
                for index in kept {
                    points.append(
                        id: ids[index], stream: stream, start: starts[index], end: ends[index],
                        value: chunk.values[index])
                }
            }
        }
        return points
    }
}
