internal import Foundation
public import Health
internal import StoreEngine

/// ``HealthStoreEngine/sampleColumns(_:as:)``: the samples of ``samples(_:as:)``, read into columns. The rows come in
/// binary format with only what the columns need (id, times, value, the ids of source, device and subject, the UTC
/// offset, the metadata's text), so that the server prints no number and no name per sample; each stream is named
/// once a call (its source, device and subject looked up by id, its metadata decoded once), and no sample value,
/// string or metadata is made per sample.
extension PostgresHealthStore {
    /// What a column read selects, in the order ``appendColumns(_:_:wanted:associated:to:streams:_:)`` reads.
    static let columnSelect = """
        SELECT s.uuid, s.start_ms, s.end_ms, s.value, s.source_id, s.device_id, s.subject_id, s.start_offset_s,
        s.metadata FROM samples s
        """

    /// How many rows one statement of ``sampleColumns(_:as:)`` reads by default (about 2.5 MB of result in libpq's
    /// memory at a time).
    static let defaultColumnsFetch = 16_384

    /// Sets how many rows one statement of ``sampleColumns(_:as:)`` reads (tests put the borders of its parts
    /// between tied samples).
    func setColumnsFetch(_ rows: Int) {
        columnsFetch = max(1, rows)
    }

    public func sampleColumns(_ query: SampleQuery, as caller: Caller) throws -> SampleColumns {
        try withConnection { connection in
            var wanted = max(0, query.limit ?? Int.max)
            // A workout predicate: only its associated samples, looked for within the interval they span (as
            // ``samples(_:as:)`` does).
            var from = query.from
            var to = query.to
            var associated: Set<UUID>?
            if let workout = query.workout {
                if let members = try workoutMembers(connection, workout, type: query.type) {
                    associated = members.ids
                    from = max(from ?? members.from, members.from)
                    to = min(to ?? members.to, members.to)
                } else {
                    wanted = 0
                }
            }
            // Rows the SQL selects but Swift refuses (metadata, a workout's members) do not count towards the limit.
            let filtered = associated != nil || !query.metadata.isEmpty
            var page = SampleColumns()
            page.reserveCapacity(min(wanted, columnsFetch))
            var streams = ColumnStreams(type: query.type)
            let typeID = try existingTypeID(connection, query.type.identifier)
            var cursor = query.cursor
            // Part by part, each one statement and one entry in the access log (with what it matched), until the
            // page is full or the rows run out.
            while true {
                let limit = filtered ? columnsFetch : min(wanted - page.count, columnsFetch)
                let before = page.count
                var read = 0
                var last: (start: Int64, end: Int64, id: UUID)?
                if let typeID, wanted > page.count {
                    var conditions = try rangeConditions(
                        connection, typeID: typeID, type: query.type, from: from, to: to, sources: query.sources,
                        devices: query.devices, subjects: query.subjects, caller: caller, after: cursor,
                        order: query.order)
                    let sql =
                        "\(Self.columnSelect) WHERE \(conditions.sql) "
                        + "ORDER BY \(query.order.orderBy(start: "s.start_ms", end: "s.end_ms", id: "s.uuid")) "
                        + "LIMIT \(conditions.parameter("\(limit)"))"
                    let rows = try connection.query(sql, conditions.parameters, binary: true)
                    (read, last) = try appendColumns(
                        rows, query, wanted: wanted, associated: associated, to: &page, streams: &streams, connection)
                }
                try log(
                    connection, caller, .query, type: query.type.identifier, count: page.count - before, denied: false)
                guard read == limit, page.count < wanted, let last else { break }
                cursor = SampleCursor(
                    start: Instant(milliseconds: last.start), end: Instant(milliseconds: last.end),
                    id: last.id.uuidString)
            }
            page.streams = streams.streams
            page.next = SampleCursor.following(matched: page.count, wanted: wanted, last: page.last)
            return page
        }
    }

    /// Adds the rows of one part (``columnSelect``, binary format) that pass the query's time test, metadata
    /// predicates and workout to `page`, until it holds `wanted`; returns how many rows there were and the last
    /// one's order fields (where the next part starts).
    private func appendColumns(
        _ rows: PostgresRows, _ query: SampleQuery, wanted: Int, associated: Set<UUID>?, to page: inout SampleColumns,
        streams: inout ColumnStreams, _ connection: PostgresConnection
    ) throws -> (read: Int, last: (start: Int64, end: Int64, id: UUID)?) {
        var last: (start: Int64, end: Int64, id: UUID)?
        let from = query.from?.milliseconds
        let to = query.to?.milliseconds
        let timed = from != nil || to != nil
        for row in 0..<rows.count {
            let field = ColumnField(rows: rows, row: row)
            let id = try field.uuid(0, "uuid")
            let start = try field.integer(1, "start_ms")
            let end = try field.integer(2, "end_ms")
            last = (start, end, id)
            if timed, !query.matchesTime(start: Instant(milliseconds: start), end: Instant(milliseconds: end)) {
                continue
            }
            if let associated, !associated.contains(id) { continue }
            let stream = try streams.number(
                source: try field.integer(4, "source_id"), device: try field.integer(5, "device_id"),
                subject: try field.integer(6, "subject_id"), offset: try field.integer(7, "start_offset_s"),
                metadata: rows.binaryBytes(row, 8)
            ) { key in try self.stream(key, type: query.type, connection) }
            guard streams.matches(stream, query) else { continue }
            guard page.count < wanted else { break }
            page.append(id: id, stream: stream, start: start, end: end, value: try field.double(3, "value"))
        }
        return (rows.count, last)
    }

    /// The stream a column read names by `key`: its source, device and subject read by id, its metadata decoded.
    private func stream(_ key: ColumnStreams.Key, type: HealthType, _ connection: PostgresConnection) throws
        -> QuantitySeries
    {
        let sources = try connection.query("SELECT identifier, version FROM sources WHERE id = $1", ["\(key.source)"])
        guard sources.count == 1, let identifier = sources.text(0, 0) else {
            throw PostgresError(code: .unexpected, message: "a sample names source \(key.source), which is not stored")
        }
        let version = sources.text(0, 1) ?? ""
        var device: Device?
        if key.device != 0 {
            let devices = try connection.query(
                """
                SELECT name, manufacturer, model, hardware, firmware, software, serial, local_id FROM devices
                WHERE id = $1
                """, ["\(key.device)"])
            guard devices.count == 1 else {
                throw PostgresError(
                    code: .unexpected, message: "a sample names device \(key.device), which is not stored")
            }
            device = Self.readDevice(devices, 0, from: 0)
        }
        var subject: String?
        if key.subject != 0 {
            let subjects = try connection.query("SELECT name FROM subjects WHERE id = $1", ["\(key.subject)"])
            guard subjects.count == 1, let name = subjects.text(0, 0) else {
                throw PostgresError(
                    code: .unexpected, message: "a sample names subject \(key.subject), which is not stored")
            }
            subject = name
        }
        return QuantitySeries(
            type: type, startOffsetSeconds: Int32(clamping: key.offset),
            source: Source(identifier: identifier, version: version.isEmpty ? nil : version), device: device,
            subject: subject, metadata: MetadataCoding.decode(key.metadata))
    }

    /// The fields of one row of a binary result, each checked for its type's length.
    struct ColumnField {
        let rows: PostgresRows
        let row: Int

        /// A `bigint` or `integer`.
        func integer(_ column: Int, _ name: String) throws -> Int64 {
            guard let bytes = rows.binaryBytes(row, column) else { throw missing(name) }
            switch bytes.count {
            case 8: return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
            case 4: return Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self)))
            default: throw malformed(name, bytes.count)
            }
        }

        /// A `double precision`, bit for bit.
        func double(_ column: Int, _ name: String) throws -> Double {
            guard let bytes = rows.binaryBytes(row, column) else { throw missing(name) }
            guard bytes.count == 8 else { throw malformed(name, bytes.count) }
            return Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
        }

        /// A `uuid`: its 16 bytes.
        func uuid(_ column: Int, _ name: String) throws -> UUID {
            guard let bytes = rows.binaryBytes(row, column) else { throw missing(name) }
            guard bytes.count == 16 else { throw malformed(name, bytes.count) }
            return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
        }

        private func missing(_ name: String) -> PostgresError {
            PostgresError(code: .unexpected, message: "row \(row + 1) of a sample read has no \(name)")
        }

        private func malformed(_ name: String, _ count: Int) -> PostgresError {
            PostgresError(code: .unexpected, message: "row \(row + 1) of a sample read has a \(name) of \(count) bytes")
        }
    }

    /// The streams of one column read, numbered as they are met, by the ids and metadata text their rows store.
    struct ColumnStreams {
        struct Key: Hashable {
            var source: Int64
            var device: Int64
            var subject: Int64
            var offset: Int64
            var metadata: String?
        }

        let type: HealthType
        private(set) var streams: [QuantitySeries] = []
        /// Per stream: whether its metadata passes the query's metadata predicates (read once).
        private var passes: [Bool?] = []
        private var index: [Key: Int32] = [:]
        /// The last row's key, its metadata's bytes and its number: a run of one stream is numbered without a
        /// lookup.
        private var lastKey: Key?
        private var lastMetadata: [UInt8] = []
        private var lastNumber: Int32 = 0

        init(type: HealthType) {
            self.type = type
        }

        /// The number of the stream of a row with these fields, made with `make` the first time it is met.
        mutating func number(
            source: Int64, device: Int64, subject: Int64, offset: Int64, metadata: UnsafeRawBufferPointer?,
            _ make: (Key) throws -> QuantitySeries
        ) throws -> Int32 {
            if let lastKey, lastKey.source == source, lastKey.device == device, lastKey.subject == subject,
                lastKey.offset == offset, (lastKey.metadata == nil) == (metadata == nil),
                metadata.map({ $0.elementsEqual(lastMetadata) }) ?? true
            {
                return lastNumber
            }
            let key = Key(
                source: source, device: device, subject: subject, offset: offset,
                metadata: metadata.map { String(decoding: $0, as: UTF8.self) })
            let number: Int32
            if let found = index[key] {
                number = found
            } else {
                number = Int32(streams.count)
                streams.append(try make(key))
                passes.append(nil)
                index[key] = number
            }
            lastKey = key
            lastMetadata = metadata.map(Array.init) ?? []
            lastNumber = number
            return number
        }

        /// Whether the samples of stream `number` pass `query`'s metadata predicates.
        mutating func matches(_ number: Int32, _ query: SampleQuery) -> Bool {
            if query.metadata.isEmpty { return true }
            if let known = passes[Int(number)] { return known }
            let result = query.matchesMetadata(streams[Int(number)].metadata)
            passes[Int(number)] = result
            return result
        }
    }
}
