internal import Foundation
public import Health
internal import StoreEngine

/// ``HealthStoreEngine/sampleColumns(_:as:)``: the samples of ``samples(_:as:)``, read into columns. A page is one
/// `COPY (SELECT ...) TO STDOUT (FORMAT binary)` of only what the columns need (id, times, value, the ids of source,
/// device and subject, the UTC offset, the metadata's text), decoded row by row as the server sends it (the SQL
/// conditions, order and cursor are those of ``samples(_:as:)``, so the pages are the same): no number is
/// printed or parsed, no result is held, and the server produces the next rows while these are decoded. Each stream
/// is named once a call (its source, device and subject looked up by id, its metadata decoded once), and no sample
/// value, string or metadata is made per sample.
extension PostgresHealthStore {
    /// What a column read selects, in the order ``sampleColumns(_:as:)`` reads. The ids of source and device, and
    /// of subject and the UTC offset, go two to a `bigint` (each 32 bits, exact for every `integer`): a fifth less of
    /// the server's time a row than a field each.
    static let columnSelect = """
        SELECT s.uuid, s.start_ms, s.end_ms, s.value, (s.source_id::bigint << 32) | (s.device_id::bigint & 4294967295),
        (s.subject_id::bigint << 32) | (s.start_offset_s::bigint & 4294967295), s.metadata FROM samples s
        """

    /// How many rows one statement of ``sampleColumns(_:as:)`` reads at most by default: the pages `export` and
    /// `samples` read in one statement each (rows are decoded as they arrive, so no result is held).
    static let defaultColumnsFetch = 65_536

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
            let scope = try query.workoutScope { try workoutMembers(connection, $0, type: query.type) }
            if scope == nil { wanted = 0 }
            let (from, to, associated) = scope ?? (query.from, query.to, nil)
            // Rows the SQL selects but Swift refuses (metadata, a workout's members) do not count towards the limit:
            // such a read goes in parts of its own size.
            let filtered = associated != nil || !query.metadata.isEmpty
            var page = SampleColumns()
            page.reserveCapacity(min(wanted, columnsFetch))
            var streams = ColumnStreams(type: query.type)
            let typeID = try existingTypeID(connection, query.type.identifier)
            var cursor = query.cursor
            // Part by part, each one statement and one entry in the access log (with what it matched), until the
            // page is full or the rows run out: one part, unless the time test refuses rows at the range's edges.
            while true {
                let limit =
                    filtered ? min(columnsFetch, Self.filteredFetch) : min(wanted - page.count, columnsFetch)
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
                    let timed = query.from != nil || query.to != nil
                    read = try connection.copyOut(sql, conditions.parameters) { row in
                        let id = try row.uuid("uuid")
                        let start = try row.integer("start_ms")
                        let end = try row.integer("end_ms")
                        let value = try row.double("value")
                        let provenance = try row.integer("source_id, device_id")
                        let person = try row.integer("subject_id, start_offset_s")
                        let metadata = try row.next("metadata")
                        last = (start, end, id)
                        guard page.count < wanted,
                            !timed
                                || query.matchesTime(
                                    start: Instant(milliseconds: start), end: Instant(milliseconds: end)),
                            associated?.contains(id) ?? true
                        else { return }
                        let stream = streams.number(
                            source: provenance >> 32, device: Int64(Int32(truncatingIfNeeded: provenance)),
                            subject: person >> 32, offset: Int64(Int32(truncatingIfNeeded: person)),
                            metadata: metadata)
                        guard streams.matches(stream, query) else { return }
                        page.append(id: id, stream: stream, start: start, end: end, value: value)
                    }
                }
                try resolve(&streams, connection)
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

    /// How many rows one part of a read with metadata or workout predicates takes.
    static let filteredFetch = 4_096

    /// Names the streams `streams` met since it was last resolved: their sources, devices and subjects read by id
    /// (each once a call), after the statement that met them (none may run while a COPY sends its rows).
    private func resolve(_ streams: inout ColumnStreams, _ connection: PostgresConnection) throws {
        try streams.resolve(
            source: { id in
                let rows = try connection.query("SELECT identifier, version FROM sources WHERE id = $1", ["\(id)"])
                guard rows.count == 1, let identifier = rows.text(0, 0) else {
                    throw PostgresError(code: .unexpected, message: "a sample names source \(id), which is not stored")
                }
                let version = rows.text(0, 1) ?? ""
                return Source(identifier: identifier, version: version.isEmpty ? nil : version)
            },
            device: { id in
                let rows = try connection.query(
                    """
                    SELECT name, manufacturer, model, hardware, firmware, software, serial, local_id FROM devices
                    WHERE id = $1
                    """, ["\(id)"])
                guard rows.count == 1 else {
                    throw PostgresError(code: .unexpected, message: "a sample names device \(id), which is not stored")
                }
                return Self.readDevice(rows, 0, from: 0)
            },
            subject: { id in
                let rows = try connection.query("SELECT name FROM subjects WHERE id = $1", ["\(id)"])
                guard rows.count == 1, let name = rows.text(0, 0) else {
                    throw PostgresError(code: .unexpected, message: "a sample names subject \(id), which is not stored")
                }
                return name
            })
    }

    /// The streams of one column read, numbered as they are met, by the ids and metadata text their rows store;
    /// named afterwards (``resolve(source:device:subject:)``), each source, device and subject read once.
    struct ColumnStreams {
        struct Key: Hashable {
            var source: Int64
            var device: Int64
            var subject: Int64
            var offset: Int64
            var metadata: String?
        }

        let type: HealthType
        /// Per stream: its key and its metadata, decoded once.
        private var keys: [Key] = []
        private var metadata: [[String: MetadataValue]] = []
        /// Per stream: whether its metadata passes the query's metadata predicates (read once).
        private var passes: [Bool?] = []
        /// The streams named so far (the first ones of ``keys``).
        private(set) var streams: [QuantitySeries] = []
        private var index: [Key: Int32] = [:]
        private var sources: [Int64: Source] = [:]
        private var devices: [Int64: Device] = [:]
        private var subjects: [Int64: String] = [:]
        /// The last row's key, its metadata's bytes and its number: a run of one stream is numbered without a
        /// lookup.
        private var lastKey: Key?
        private var lastMetadata: [UInt8] = []
        private var lastNumber: Int32 = 0

        init(type: HealthType) {
            self.type = type
        }

        /// The number of the stream of a row with these fields.
        mutating func number(
            source: Int64, device: Int64, subject: Int64, offset: Int64, metadata text: UnsafeRawBufferPointer?
        ) -> Int32 {
            if let lastKey, lastKey.source == source, lastKey.device == device, lastKey.subject == subject,
                lastKey.offset == offset, (lastKey.metadata == nil) == (text == nil),
                text.map({ $0.elementsEqual(lastMetadata) }) ?? true
            {
                return lastNumber
            }
            let key = Key(
                source: source, device: device, subject: subject, offset: offset,
                metadata: text.map { String(decoding: $0, as: UTF8.self) })
            let number: Int32
            if let found = index[key] {
                number = found
            } else {
                number = Int32(keys.count)
                keys.append(key)
                metadata.append(MetadataCoding.decode(key.metadata))
                passes.append(nil)
                index[key] = number
            }
            lastKey = key
            lastMetadata = text.map(Array.init) ?? []
            lastNumber = number
            return number
        }

        /// Whether the samples of stream `number` pass `query`'s metadata predicates.
        mutating func matches(_ number: Int32, _ query: SampleQuery) -> Bool {
            if query.metadata.isEmpty { return true }
            if let known = passes[Int(number)] { return known }
            let result = query.matchesMetadata(metadata[Int(number)])
            passes[Int(number)] = result
            return result
        }

        /// Names the streams numbered since the last call, reading each source, device and subject not read yet
        /// with the functions given (device and subject 0: none).
        mutating func resolve(
            source: (Int64) throws -> Source, device: (Int64) throws -> Device, subject: (Int64) throws -> String
        ) throws {
            while streams.count < keys.count {
                let number = streams.count
                let key = keys[number]
                let named = try sources[key.source] ?? source(key.source)
                sources[key.source] = named
                var found: Device?
                if key.device != 0 {
                    let read = try devices[key.device] ?? device(key.device)
                    devices[key.device] = read
                    found = read
                }
                var person: String?
                if key.subject != 0 {
                    let read = try subjects[key.subject] ?? subject(key.subject)
                    subjects[key.subject] = read
                    person = read
                }
                streams.append(
                    QuantitySeries(
                        type: type, startOffsetSeconds: Int32(clamping: key.offset), source: named, device: found,
                        subject: person, metadata: metadata[number]))
            }
        }
    }
}
