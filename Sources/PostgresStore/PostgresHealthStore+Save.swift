import Foundation
public import Health
internal import StoreEngine

extension PostgresHealthStore {
    /// Saves a batch in one transaction (`docs/store-semantics.md`, items 21-23), with the SQLite engine's outcomes.
    public func save(_ samples: [QuantitySample], as caller: Caller) throws -> [WriteOutcome] {
        let types = try checkedTypes(samples)
        try requireShare(caller, types)
        return try writeTransaction { connection in try insertSamples(connection, samples, caller) }
    }

    /// The types of `samples` as the catalog has them, each once, in order; an unknown type or an invalid sample
    /// rejects the batch (``InvalidSampleError`` with the sample's place in `samples`).
    func checkedTypes(_ samples: [QuantitySample]) throws(InvalidSampleError) -> [HealthType] {
        var types: [HealthType] = []
        var previous: HealthType?
        for (index, sample) in samples.enumerated() {
            let type: HealthType
            if let previous, previous.identifier == sample.type.identifier {
                type = previous
            } else {
                guard let known = HealthTypeCatalog.type(sample.type.identifier) else {
                    throw InvalidSampleError(index: index, reason: "unknown type '\(sample.type.identifier)'")
                }
                type = known
                if !types.contains(where: { $0.identifier == known.identifier }) { types.append(known) }
            }
            previous = type
            if let reason = sample.invalidityReason(as: type) { throw InvalidSampleError(index: index, reason: reason) }
        }
        return types
    }

    /// Stores checked samples inside the running write transaction and logs the save, per type.
    func insertSamples(_ connection: PostgresConnection, _ samples: [QuantitySample], _ caller: Caller) throws
        -> [WriteOutcome]
    {
        let writer = caller.description
        let outcomes: [WriteOutcome]
        if samples.contains(where: { Self.externalID($0) != nil }) {
            // Client ids: sample by sample, in order, as the versions demand.
            outcomes = try samples.enumerated().map { index, sample in
                try save(connection, sample, index: index, writer: writer)
            }
        } else {
            var rows: [SampleRow] = []
            rows.reserveCapacity(samples.count)
            var last: (sample: QuantitySample, ids: (Int64, Int64, Int64, Int64), metadata: String?)?
            for sample in samples {
                if let last, last.sample.sharesIDs(with: sample), last.sample.metadata == sample.metadata {
                    rows.append(SampleRow(sample, ids: last.ids, metadata: last.metadata))
                    continue
                }
                let ids = (
                    try typeID(connection, sample.type.identifier), try sourceID(connection, sample.source),
                    try deviceID(connection, sample.device), try subjectID(connection, sample.subject)
                )
                let metadata = encodedMetadata(sample.metadata)
                last = (sample, ids, metadata)
                rows.append(SampleRow(sample, ids: ids, metadata: metadata))
            }
            outcomes = try saveBatch(connection, rows, writer: writer)
        }
        var counts: [String: Int] = [:]
        for sample in samples { counts[sample.type.identifier, default: 0] += 1 }
        for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
            try log(connection, caller, .save, type: type, count: count, denied: false)
        }
        return outcomes
    }

    /// Stores checked streams (``QuantitySeries/catalogued(_:)``) inside the running write transaction, column
    /// by column (no sample value is made: each stream's ids and metadata are looked up once), and logs the save,
    /// per type. Streams with client ids go sample by sample (``insertSamples(_:_:_:)``).
    func insertSeries(
        _ connection: PostgresConnection, _ quantities: [QuantitySeries], types: [HealthType], _ caller: Caller
    ) throws -> [WriteOutcome] {
        if quantities.contains(where: { Self.externalID($0.metadata) != nil }) {
            return try insertSamples(connection, quantities.flatMap(\.samples), caller)
        }
        var rows: [SampleRow] = []
        rows.reserveCapacity(quantities.reduce(0) { $0 + $1.count })
        var counts: [String: Int] = [:]
        for (series, type) in zip(quantities, types) where !series.isEmpty {
            counts[type.identifier, default: 0] += series.count
            let ids = (
                try typeID(connection, type.identifier), try sourceID(connection, series.source),
                try deviceID(connection, series.device), try subjectID(connection, series.subject)
            )
            let metadata = encodedMetadata(series.metadata)
            let deviceKey = series.device?.key
            for index in 0..<series.count {
                let start = series.starts[index]
                let end = series.ends[index]
                rows.append(
                    SampleRow(
                        typeID: ids.0, sourceID: ids.1, deviceID: ids.2, subjectID: ids.3, start: start, end: end,
                        value: series.values[index],
                        id: QuantitySample.derivedID(
                            type: type.identifier, source: series.source.identifier, device: deviceKey,
                            start: Instant(milliseconds: start), end: Instant(milliseconds: end)),
                        offset: series.startOffsetSeconds, metadata: metadata, aggregation: type.aggregation))
            }
        }
        let outcomes = try saveBatch(connection, rows, writer: caller.description)
        for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
            try log(connection, caller, .save, type: type, count: count, denied: false)
        }
        return outcomes
    }

    /// `(externalUUID, syncVersion)` from the metadata, when the sample carries a client id.
    static func externalID(_ sample: QuantitySample) -> (String, Int64)? {
        externalID(sample.metadata)
    }

    static func externalID(_ metadata: [String: MetadataValue]) -> (String, Int64)? {
        guard !metadata.isEmpty, case .string(let external)? = metadata[MetadataKey.externalUUID] else {
            return nil
        }
        return (external, metadata.syncVersion)
    }

    // MARK: - Batches without client ids

    /// A quantity sample of a batch as it goes into `samples`: its ids and columns, without the sample value.
    struct SampleRow {
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64
        var subjectID: Int64
        var start: Int64
        var end: Int64
        var value: Double
        var id: UUID
        var offset: Int32
        /// The encoded metadata (``encodedMetadata(_:)``).
        var metadata: String?
        var aggregation: HealthType.Aggregation

        init(
            typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64,
            value: Double, id: UUID, offset: Int32, metadata: String?, aggregation: HealthType.Aggregation
        ) {
            self.typeID = typeID
            self.sourceID = sourceID
            self.deviceID = deviceID
            self.subjectID = subjectID
            self.start = start
            self.end = end
            self.value = value
            self.id = id
            self.offset = offset
            self.metadata = metadata
            self.aggregation = aggregation
        }

        init(_ sample: QuantitySample, ids: (Int64, Int64, Int64, Int64), metadata: String?) {
            self.init(
                typeID: ids.0, sourceID: ids.1, deviceID: ids.2, subjectID: ids.3, start: sample.start.milliseconds,
                end: sample.end.milliseconds, value: sample.value, id: sample.id, offset: sample.startOffsetSeconds,
                metadata: metadata, aggregation: sample.type.aggregation)
        }
    }

    private struct NaturalKey: Hashable {
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64
        var start: Int64
        var end: Int64
    }

    /// The rows of a batch: the first row of each natural key (and of each uuid) is staged, the others follow it
    /// (`followers`: row and the position of its leader in `staged`). A stream that runs strictly forward in time,
    /// of a type, source and device no other stream of the batch has, repeats neither, and is not hashed.
    private static func leaders(_ rows: [SampleRow], versioned: [Int64: Int64]) throws(InvalidSampleError) -> (
        staged: [Int], followers: [(index: Int, leader: Int)]
    ) {
        struct Origin: Hashable {
            var typeID: Int64
            var sourceID: Int64
            var deviceID: Int64
        }
        var origins: Set<Origin> = []
        var unique = true
        var previous: (origin: Origin, start: Int64, end: Int64)?
        for row in rows {
            let origin = Origin(
                typeID: row.typeID, sourceID: versioned[row.sourceID] ?? row.sourceID, deviceID: row.deviceID)
            if let before = previous, before.origin == origin {
                guard (before.start, before.end) < (row.start, row.end) else {
                    unique = false
                    break
                }
            } else if !origins.insert(origin).inserted {
                unique = false
                break
            }
            previous = (origin, row.start, row.end)
        }
        if unique { return (Array(rows.indices), []) }

        var staged: [Int] = []
        staged.reserveCapacity(rows.count)
        var byKey: [NaturalKey: Int] = [:]  // position in `staged`
        byKey.reserveCapacity(rows.count)
        var byUUID: [UUID: Int] = [:]
        byUUID.reserveCapacity(rows.count)
        var followers: [(index: Int, leader: Int)] = []
        for (index, row) in rows.enumerated() {
            let key = NaturalKey(
                typeID: row.typeID, sourceID: versioned[row.sourceID] ?? row.sourceID, deviceID: row.deviceID,
                start: row.start, end: row.end)
            if let leader = byUUID[row.id] {
                let first = rows[staged[leader]]
                guard first.typeID == row.typeID, first.start == row.start, first.end == row.end else {
                    throw InvalidSampleError(index: index, reason: "uuid \(row.id) already names a different sample")
                }
                followers.append((index, leader))
            } else if let leader = byKey[key] {
                followers.append((index, leader))
            } else {
                byKey[key] = staged.count
                byUUID[row.id] = staged.count
                staged.append(index)
            }
        }
        return (staged, followers)
    }

    /// The batch, first straight into `samples` by COPY (``optimisticCopy``: a savepoint, rolled back when a row
    /// is already stored), else through the staging table: staged, then inserted with `ON CONFLICT DO NOTHING`;
    /// what was not inserted is compared with the stored sample that holds its uuid or its key. A later sample of
    /// the batch with the same key compares with the sample the first one was compared with (itself, when it was
    /// inserted), as a write one by one would.
    private func saveBatch(_ connection: PostgresConnection, _ rows: [SampleRow], writer: String) throws
        -> [WriteOutcome]
    {
        var outcomes = [WriteOutcome](repeating: .rejected, count: rows.count)
        // Sources written at more than one version, each with the id of its first: their natural keys are looked
        // for under every version (item 21), which the unique index, per version, does not do.
        var versioned: [Int64: Int64] = [:]
        var seen: Set<Int64> = []
        var last: Int64?
        for row in rows where row.sourceID != last {
            last = row.sourceID
            guard seen.insert(row.sourceID).inserted else { continue }
            let versions = try sourceVersionIDs(connection, row.sourceID)
            if versions.count > 1 { versioned[row.sourceID] = versions.min() }
        }
        let (staged, followers) = try Self.leaders(rows, versioned: versioned)
        // Only where another version has samples in the batch's range must a key be looked for under it; a gateway
        // upgraded long ago writes after its old version's last sample, straight in.
        let anyVersion = try !versioned.isEmpty && otherVersionsOverlap(connection, rows, versioned)
        let first = reserveSequence(staged.count)
        var inserted = 0
        if optimisticCopy, bulkMethod == .copy, !anyVersion {
            let data = Self.copyData(rows, staged, firstSequence: first, writer: writer)
            if copiesUnderSavepoints {
                if let copied = try Self.copyStraight(connection, data) {
                    inserted = copied
                } else {
                    optimisticCopy = false
                }
            } else {
                inserted = try Self.copyStraight(connection, data, savepoint: false) ?? 0
            }
        }
        var reference = staged.map { (value: rows[$0].value, subjectID: rows[$0].subjectID, inserted: true) }
        if inserted < staged.count {
            try stage(connection, rows, staged, firstSequence: first, writer: writer)
            inserted = try connection.query(
                """
                INSERT INTO samples (\(Self.stagedColumns)) SELECT \(Self.stagedColumns) FROM staging st
                \(anyVersion ? "WHERE NOT EXISTS (SELECT 1 FROM samples n WHERE \(Self.sameKeyAnyVersion))" : "")
                ON CONFLICT DO NOTHING
                """
            ).affected
            // Straight in again once a batch finds nothing stored.
            optimisticCopy = inserted == staged.count
        }

        // What each staged sample compares with: itself when inserted, else the stored sample.
        if inserted < staged.count {
            let clashes = try connection.query(
                """
                SELECT st.seq, u.type_id, u.start_ms, u.end_ms, u.value, u.subject_id, n.value, n.subject_id
                FROM staging st
                LEFT JOIN samples u ON u.uuid = st.uuid
                LEFT JOIN samples n ON \(anyVersion ? Self.sameKeyAnyVersion : Self.sameKey)
                WHERE u.seq IS DISTINCT FROM st.seq
                """)
            for row in 0..<clashes.count {
                let position = Int(clashes.int64(row, 0) - first)
                guard staged.indices.contains(position) else {
                    throw PostgresError(code: .unexpected, message: "a staged row of another batch came back")
                }
                let mine = rows[staged[position]]
                if !clashes.isNull(row, 1) {
                    // The uuid names a stored sample: the same measurement, or a clash that rejects the batch.
                    guard clashes.int64(row, 1) == mine.typeID, clashes.int64(row, 2) == mine.start,
                        clashes.int64(row, 3) == mine.end
                    else {
                        throw InvalidSampleError(
                            index: staged[position], reason: "uuid \(mine.id) already names a different sample")
                    }
                    reference[position] = (clashes.double(row, 4), clashes.int64(row, 5), false)
                } else if !clashes.isNull(row, 6) {
                    reference[position] = (clashes.double(row, 6), clashes.int64(row, 7), false)
                } else {
                    throw PostgresError(code: .unexpected, message: "a staged sample was neither inserted nor found")
                }
            }
        }
        var spans: [Int64: Int64] = [:]
        for (position, index) in staged.enumerated() {
            let row = rows[index]
            let stored = reference[position]
            guard stored.inserted else {
                let same = stored.value == row.value && stored.subjectID == row.subjectID
                outcomes[index] = same ? .duplicate : .conflict
                continue
            }
            outcomes[index] = .inserted
            switch row.aggregation {
            case .discrete:
                noteInserted(
                    RollupKey(
                        typeID: row.typeID, sourceID: row.sourceID, deviceID: row.deviceID, subjectID: row.subjectID,
                        bucket: Rollup.bucket(row.start)),
                    start: row.start, end: row.end, value: row.value)
            case .cumulative:
                cumulativeChanges.inserted(
                    typeID: row.typeID, sourceID: row.sourceID, deviceID: row.deviceID, subjectID: row.subjectID,
                    start: row.start, end: row.end, value: row.value, seq: first + Int64(position))
            case .series, .category, .notAggregated:
                break
            }
            if row.end - row.start > spans[row.typeID] ?? -1 { spans[row.typeID] = row.end - row.start }
        }
        for (index, leader) in followers {
            let stored = reference[leader]
            outcomes[index] =
                stored.value == rows[index].value && stored.subjectID == rows[index].subjectID ? .duplicate : .conflict
        }
        for (typeID, span) in spans { try noteSpan(connection, typeID: typeID, span: span) }
        return outcomes
    }

    /// Whether the batch's sources written at more than one version (`versioned`: each with the id of its first)
    /// have samples under another version than the batch writes at (or, when the batch writes at several, under any)
    /// of the batch's types, starting within its time range.
    private func otherVersionsOverlap(
        _ connection: PostgresConnection, _ rows: [SampleRow], _ versioned: [Int64: Int64]
    ) throws -> Bool {
        var present: [Int64: Set<Int64>] = [:]  // by the first version's id: the versions the batch writes at
        var types: Set<Int64> = []
        var range = (low: Int64.max, high: Int64.min)
        for row in rows {
            guard let natural = versioned[row.sourceID] else { continue }
            present[natural, default: []].insert(row.sourceID)
            types.insert(row.typeID)
            range = (min(range.low, row.start), max(range.high, row.start))
        }
        var others: [Int64] = []
        for versions in present.values {
            guard let one = versions.first else { continue }
            let family = try sourceVersionIDs(connection, one)
            others += versions.count > 1 ? family : family.filter { !versions.contains($0) }
        }
        guard !others.isEmpty else { return false }
        let found = try connection.query(
            """
            SELECT count(*) FROM (
                SELECT 1 FROM samples
                WHERE type_id = ANY($1::integer[]) AND start_ms BETWEEN $2 AND $3 AND source_id = ANY($4::integer[])
                    AND external_uuid IS NULL
                LIMIT 1) AS x
            """,
            [PostgresText.array(types.sorted()), "\(range.low)", "\(range.high)", PostgresText.array(others)])
        return found.int64(0, 0) > 0
    }

    /// A stored sample `n` with the natural key of the staged sample `st` (item 21).
    private static let sameKey = """
        n.external_uuid IS NULL AND n.type_id = st.type_id AND n.start_ms = st.start_ms
            AND n.source_id = st.source_id AND n.device_id = st.device_id AND n.end_ms = st.end_ms
        """
    /// ``sameKey`` written by any version of the staged sample's source.
    private static let sameKeyAnyVersion = """
        n.external_uuid IS NULL AND n.type_id = st.type_id AND n.start_ms = st.start_ms
            AND n.source_id IN (
                SELECT v.id FROM sources v WHERE v.identifier = (SELECT s.identifier FROM sources s WHERE s.id = st.source_id))
            AND n.device_id = st.device_id AND n.end_ms = st.end_ms
        """

    /// COPYs `data` straight into `samples` and returns the rows copied. When one of them is stored already (a
    /// unique index refuses it): under a savepoint, it is rolled back and the answer is `nil`; without, the
    /// transaction is aborted, and ``StoredRowMet`` says so.
    private static func copyStraight(_ connection: PostgresConnection, _ data: [UInt8], savepoint: Bool = true) throws
        -> Int?
    {
        if savepoint { try connection.run("SAVEPOINT batch") }
        do {
            let copied = try connection.copy("COPY samples (\(stagedColumns)) FROM STDIN (FORMAT binary)", data: data)
            if savepoint { try connection.run("RELEASE SAVEPOINT batch") }
            return copied
        } catch {
            guard error.sqlState == "23505" else { throw error }  // unique_violation
            guard savepoint else { throw StoredRowMet() }
            try connection.run("ROLLBACK TO SAVEPOINT batch; RELEASE SAVEPOINT batch")
            return nil
        }
    }

    /// The columns of `samples` a batch fills, in the order of the staging table and of ``copyData(_:_:firstSequence:writer:)``.
    static let stagedColumns = """
        type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s, value, writer, seq, metadata
        """

    /// The staged rows in COPY's binary format (``stagedColumns``), the staged row at position p with sequence
    /// number `firstSequence + p`.
    private static func copyData(_ rows: [SampleRow], _ staged: [Int], firstSequence: Int64, writer: String)
        -> [UInt8]
    {
        var buffer = CopyBinaryBuffer(capacity: staged.count * 130)
        let writerBytes = Array(writer.utf8)
        for (position, index) in staged.enumerated() {
            let row = rows[index]
            buffer.row(fields: 12)
            buffer.int32(Int32(truncatingIfNeeded: row.typeID))
            buffer.int64(row.start)
            buffer.int64(row.end)
            buffer.int32(Int32(truncatingIfNeeded: row.sourceID))
            buffer.int32(Int32(truncatingIfNeeded: row.deviceID))
            buffer.int32(Int32(truncatingIfNeeded: row.subjectID))
            buffer.uuid(row.id)
            buffer.int32(row.offset)
            buffer.double(row.value)
            buffer.bytes(writerBytes)
            buffer.int64(firstSequence + Int64(position))
            buffer.text(row.metadata)
        }
        return buffer.finished()
    }

    /// Fills the staging table with the staged rows (emptied first when an earlier batch of the transaction left
    /// its rows there).
    private func stage(
        _ connection: PostgresConnection, _ rows: [SampleRow], _ staged: [Int], firstSequence: Int64, writer: String
    ) throws {
        if stagingFilled { try connection.run("TRUNCATE staging") }
        stagingFilled = true
        switch bulkMethod {
        case .copy:
            try connection.copy(
                "COPY staging (\(Self.stagedColumns)) FROM STDIN (FORMAT binary)",
                data: Self.copyData(rows, staged, firstSequence: firstSequence, writer: writer))
        case .arrays:
            let chosen = staged.map { rows[$0] }
            try connection.query(
                """
                INSERT INTO staging (\(Self.stagedColumns))
                SELECT t, s, e, so, d, sj, u, o, v, $10, q, m
                FROM unnest($1::integer[], $2::bigint[], $3::bigint[], $4::integer[], $5::integer[], $6::integer[],
                    $7::uuid[], $8::integer[], $9::float8[], $11::bigint[], $12::text[])
                    AS x (t, s, e, so, d, sj, u, o, v, q, m)
                """,
                [
                    PostgresText.array(chosen.map(\.typeID)), PostgresText.array(chosen.map(\.start)),
                    PostgresText.array(chosen.map(\.end)), PostgresText.array(chosen.map(\.sourceID)),
                    PostgresText.array(chosen.map(\.deviceID)), PostgresText.array(chosen.map(\.subjectID)),
                    "{" + chosen.map(\.id.uuidString).joined(separator: ",") + "}",
                    PostgresText.array(chosen.map(\.offset)), PostgresText.array(chosen.map(\.value)), writer,
                    PostgresText.array(staged.indices.map { firstSequence + Int64($0) }),
                    PostgresText.nullableArray(chosen.map(\.metadata)),
                ])
        }
    }

    /// The id of the stored sample that `sample` was found to be again (its outcome `.duplicate`): its own id when
    /// that is stored, else that of the stored sample of its client id or natural key, under any version of its
    /// source.
    func storedID(_ connection: PostgresConnection, duplicating sample: QuantitySample) throws -> UUID {
        let byUUID = try connection.query("SELECT 1 FROM samples WHERE uuid = $1", [sample.id.uuidString])
        if byUUID.count > 0 { return sample.id }
        let versions = PostgresText.array(try sourceVersionIDs(connection, try sourceID(connection, sample.source)))
        let typeID = try typeID(connection, sample.type.identifier)
        let stored: PostgresRows
        if let (externalUUID, _) = Self.externalID(sample) {
            stored = try connection.query(
                """
                SELECT uuid FROM samples WHERE source_id = ANY($1::integer[]) AND type_id = $2 AND external_uuid = $3
                ORDER BY version DESC, seq LIMIT 1
                """, [versions, "\(typeID)", externalUUID])
        } else {
            stored = try connection.query(
                """
                SELECT uuid FROM samples
                WHERE type_id = $1 AND start_ms = $2 AND source_id = ANY($3::integer[]) AND device_id = $4
                    AND end_ms = $5 AND external_uuid IS NULL
                """,
                [
                    "\(typeID)", "\(sample.start.milliseconds)", versions,
                    "\(try deviceID(connection, sample.device))", "\(sample.end.milliseconds)",
                ])
        }
        guard stored.count > 0, let id = UUID(uuidString: stored.text(0, 0) ?? "") else { return sample.id }
        return id
    }

    // MARK: - Samples with client ids, one by one

    private func save(_ connection: PostgresConnection, _ sample: QuantitySample, index: Int, writer: String) throws
        -> WriteOutcome
    {
        let typeID = try typeID(connection, sample.type.identifier)
        let sourceID = try sourceID(connection, sample.source)
        let deviceID = try deviceID(connection, sample.device)
        let subjectID = try subjectID(connection, sample.subject)
        let external = Self.externalID(sample)
        let start = sample.start.milliseconds
        let end = sample.end.milliseconds
        let versions = PostgresText.array(try sourceVersionIDs(connection, sourceID))

        let byUUID = try connection.query(
            "SELECT type_id, start_ms, end_ms, value, subject_id FROM samples WHERE uuid = $1", [sample.id.uuidString])
        if byUUID.count > 0 {
            // The same sample written again keeps its row; a uuid naming another sample rejects the batch.
            guard byUUID.int64(0, 0) == typeID, byUUID.int64(0, 1) == start, byUUID.int64(0, 2) == end else {
                throw InvalidSampleError(index: index, reason: "uuid \(sample.id) already names a different sample")
            }
            return byUUID.double(0, 3) == sample.value && byUUID.int64(0, 4) == subjectID ? .duplicate : .conflict
        }
        if let (externalUUID, version) = external {
            let stored = try connection.query(
                """
                SELECT uuid, version, start_ms, end_ms, value, device_id, subject_id FROM samples
                WHERE source_id = ANY($1::integer[]) AND type_id = $2 AND external_uuid = $3
                ORDER BY version DESC, seq
                """, [versions, "\(typeID)", externalUUID])
            if stored.count > 0 {
                let storedVersion = stored.int64(0, 1)
                if version < storedVersion { return .stale }
                if version == storedVersion {
                    let same =
                        stored.int64(0, 2) == start && stored.int64(0, 3) == end && stored.double(0, 4) == sample.value
                        && stored.int64(0, 5) == deviceID && stored.int64(0, 6) == subjectID
                    return same ? .duplicate : .conflict
                }
                // Every sample of the client id goes: a store written before versions shared client ids may
                // hold one under each version.
                for row in 0..<stored.count {
                    guard let old = UUID(uuidString: stored.text(row, 0) ?? "") else { continue }
                    try remove(connection, uuid: old, typeID: typeID, writer: writer, replacedBy: sample.id)
                }
                try insert(connection, sample, (typeID, sourceID, deviceID, subjectID), writer: writer, external)
                return .replaced
            }
        } else {
            let stored = try connection.query(
                """
                SELECT value, subject_id FROM samples
                WHERE type_id = $1 AND start_ms = $2 AND source_id = ANY($3::integer[]) AND device_id = $4
                    AND end_ms = $5 AND external_uuid IS NULL
                """, ["\(typeID)", "\(start)", versions, "\(deviceID)", "\(end)"])
            if stored.count > 0 {
                return stored.double(0, 0) == sample.value && stored.int64(0, 1) == subjectID ? .duplicate : .conflict
            }
        }
        try insert(connection, sample, (typeID, sourceID, deviceID, subjectID), writer: writer, external)
        return .inserted
    }

    private func insert(
        _ connection: PostgresConnection, _ sample: QuantitySample, _ ids: (Int64, Int64, Int64, Int64),
        writer: String, _ external: (String, Int64)?
    ) throws {
        let seq = nextSequence()
        try connection.query(
            """
            INSERT INTO samples (type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s,
                value, writer, external_uuid, version, seq, metadata)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """,
            [
                "\(ids.0)", "\(sample.start.milliseconds)", "\(sample.end.milliseconds)", "\(ids.1)", "\(ids.2)",
                "\(ids.3)", sample.id.uuidString, "\(sample.startOffsetSeconds)", PostgresText.double(sample.value),
                writer, external?.0, external.map { "\($0.1)" }, "\(seq)", encodedMetadata(sample.metadata),
            ])
        switch sample.type.aggregation {
        case .discrete:
            noteInserted(
                RollupKey(
                    typeID: ids.0, sourceID: ids.1, deviceID: ids.2, subjectID: ids.3,
                    bucket: Rollup.bucket(sample.start.milliseconds)),
                start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
        case .cumulative:
            cumulativeChanges.inserted(
                typeID: ids.0, sourceID: ids.1, deviceID: ids.2, subjectID: ids.3, start: sample.start.milliseconds,
                end: sample.end.milliseconds, value: sample.value, seq: seq)
        case .series, .category, .notAggregated:
            break
        }
        try noteSpan(connection, typeID: ids.0, span: sample.end.milliseconds - sample.start.milliseconds)
    }

    /// Deletes one stored sample and leaves its tombstone.
    func remove(_ connection: PostgresConnection, uuid: UUID, typeID: Int64, writer: String, replacedBy: UUID?) throws {
        let deleted = try connection.query(
            "DELETE FROM samples WHERE uuid = $1 RETURNING source_id, device_id, subject_id, start_ms, end_ms",
            [uuid.uuidString])
        if deleted.count > 0 {
            switch HealthTypeCatalog.type(try typeIdentifier(connection, typeID))?.aggregation {
            case .discrete:
                staleRollups.insert(
                    RollupKey(
                        typeID: typeID, sourceID: deleted.int64(0, 0), deviceID: deleted.int64(0, 1),
                        subjectID: deleted.int64(0, 2), bucket: Rollup.bucket(deleted.int64(0, 3))))
            case .cumulative:
                cumulativeChanges.removed(
                    typeID: typeID, sourceID: deleted.int64(0, 0), deviceID: deleted.int64(0, 1),
                    subjectID: deleted.int64(0, 2), start: deleted.int64(0, 3), end: deleted.int64(0, 4))
            default:
                break
            }
        }
        try tombstone(connection, uuid: uuid, typeID: typeID, writer: writer, replacedBy: replacedBy)
    }

    /// Records that sample `uuid` is gone, for ``changes(of:since:limit:as:)``.
    func tombstone(_ connection: PostgresConnection, uuid: UUID, typeID: Int64, writer: String, replacedBy: UUID?)
        throws
    {
        try connection.query(
            "INSERT INTO tombstones (seq, type_id, uuid, writer, deleted_ms, replaced_by) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                "\(nextSequence())", "\(typeID)", uuid.uuidString, writer, "\(now().milliseconds)",
                replacedBy?.uuidString,
            ])
    }

    /// The identifier of stored type `typeID`.
    func typeIdentifier(_ connection: PostgresConnection, _ typeID: Int64) throws -> String {
        if let identifier = typeIDs.first(where: { $0.value == typeID })?.key { return identifier }
        let rows = try connection.query("SELECT identifier FROM types WHERE id = $1", ["\(typeID)"])
        guard rows.count > 0, let identifier = rows.text(0, 0) else { return "" }
        typeIDs[identifier] = typeID
        return identifier
    }
}

extension QuantitySample {
    /// Whether `other` has the same type, source, device and subject (and so the same ids).
    fileprivate func sharesIDs(with other: QuantitySample) -> Bool {
        type.identifier == other.type.identifier && source == other.source && device == other.device
            && subject == other.subject
    }
}
