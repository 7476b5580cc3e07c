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
            outcomes = try saveBatch(connection, samples, writer: writer)
        }
        var counts: [String: Int] = [:]
        for sample in samples { counts[sample.type.identifier, default: 0] += 1 }
        for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
            try log(connection, caller, .save, type: type, count: count, denied: false)
        }
        return outcomes
    }

    /// `(externalUUID, syncVersion)` from the metadata, when the sample carries a client id.
    static func externalID(_ sample: QuantitySample) -> (String, Int64)? {
        guard !sample.metadata.isEmpty, case .string(let external)? = sample.metadata[MetadataKey.externalUUID] else {
            return nil
        }
        return (external, sample.metadata.syncVersion)
    }

    // MARK: - Batches without client ids

    /// A sample of the batch that goes to the staging table, with its ids.
    private struct Staged {
        var index: Int
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64
        var subjectID: Int64
        var seq: Int64
    }

    private struct NaturalKey: Hashable {
        var typeID: Int64
        var sourceID: Int64
        var deviceID: Int64
        var start: Int64
        var end: Int64
    }

    /// The batch through the staging table: the first sample of each natural key (and of each uuid) is staged,
    /// then inserted with `ON CONFLICT DO NOTHING`; what was not inserted is compared with the stored sample that
    /// holds its uuid or its key. A later sample of the batch with the same key compares with the sample the first
    /// one was compared with (itself, when it was inserted), as a write one by one would.
    private func saveBatch(_ connection: PostgresConnection, _ samples: [QuantitySample], writer: String) throws
        -> [WriteOutcome]
    {
        var outcomes = [WriteOutcome](repeating: .rejected, count: samples.count)
        var staged: [Staged] = []
        staged.reserveCapacity(samples.count)
        var byKey: [NaturalKey: Int] = [:]  // position in `staged`
        var byUUID: [UUID: Int] = [:]
        var followers: [(index: Int, leader: Int)] = []
        var last: (sample: QuantitySample, ids: (Int64, Int64, Int64, Int64))?
        for (index, sample) in samples.enumerated() {
            let ids: (Int64, Int64, Int64, Int64)
            if let last, last.sample.sharesIDs(with: sample) {
                ids = last.ids
            } else {
                ids = (
                    try typeID(connection, sample.type.identifier), try sourceID(connection, sample.source),
                    try deviceID(connection, sample.device), try subjectID(connection, sample.subject)
                )
                last = (sample, ids)
            }
            let key = NaturalKey(
                typeID: ids.0, sourceID: ids.1, deviceID: ids.2, start: sample.start.milliseconds,
                end: sample.end.milliseconds)
            if let leader = byUUID[sample.id] {
                let first = samples[staged[leader].index]
                guard first.type.identifier == sample.type.identifier, first.start == sample.start,
                    first.end == sample.end
                else {
                    throw InvalidSampleError(index: index, reason: "uuid \(sample.id) already names a different sample")
                }
                followers.append((index, leader))
            } else if let leader = byKey[key] {
                followers.append((index, leader))
            } else {
                byKey[key] = staged.count
                byUUID[sample.id] = staged.count
                staged.append(
                    Staged(index: index, typeID: ids.0, sourceID: ids.1, deviceID: ids.2, subjectID: ids.3, seq: 0))
            }
        }
        let first = reserveSequence(staged.count)
        for position in staged.indices { staged[position].seq = first + Int64(position) }
        try stage(connection, samples, staged, writer: writer)
        let inserted = try connection.query(
            """
            INSERT INTO samples (type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s,
                value, writer, seq, metadata)
            SELECT type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s, value, writer,
                seq, metadata
            FROM staging
            ON CONFLICT DO NOTHING
            """
        ).affected

        // What each staged sample compares with: itself when inserted, else the stored sample.
        var reference = staged.map { (value: samples[$0.index].value, subjectID: $0.subjectID, inserted: true) }
        if inserted < staged.count {
            let clashes = try connection.query(
                """
                SELECT st.seq, u.type_id, u.start_ms, u.end_ms, u.value, u.subject_id, n.value, n.subject_id
                FROM staging st
                LEFT JOIN samples u ON u.uuid = st.uuid
                LEFT JOIN samples n ON n.external_uuid IS NULL AND n.type_id = st.type_id
                    AND n.start_ms = st.start_ms AND n.source_id = st.source_id AND n.device_id = st.device_id
                    AND n.end_ms = st.end_ms
                WHERE u.seq IS DISTINCT FROM st.seq
                """)
            for row in 0..<clashes.count {
                let position = Int(clashes.int64(row, 0) - first)
                guard staged.indices.contains(position) else {
                    throw PostgresError(code: .unexpected, message: "a staged row of another batch came back")
                }
                let mine = staged[position]
                if !clashes.isNull(row, 1) {
                    // The uuid names a stored sample: the same measurement, or a clash that rejects the batch.
                    guard clashes.int64(row, 1) == mine.typeID,
                        clashes.int64(row, 2) == samples[mine.index].start.milliseconds,
                        clashes.int64(row, 3) == samples[mine.index].end.milliseconds
                    else {
                        throw InvalidSampleError(
                            index: mine.index, reason: "uuid \(samples[mine.index].id) already names a different sample"
                        )
                    }
                    reference[position] = (clashes.double(row, 4), clashes.int64(row, 5), false)
                } else if !clashes.isNull(row, 6) {
                    reference[position] = (clashes.double(row, 6), clashes.int64(row, 7), false)
                } else {
                    throw PostgresError(code: .unexpected, message: "a staged sample was neither inserted nor found")
                }
            }
        }
        for (position, entry) in staged.enumerated() {
            let sample = samples[entry.index]
            let stored = reference[position]
            if stored.inserted {
                outcomes[entry.index] = .inserted
                switch sample.type.aggregation {
                case .discrete:
                    noteInserted(
                        RollupKey(
                            typeID: entry.typeID, sourceID: entry.sourceID, deviceID: entry.deviceID,
                            subjectID: entry.subjectID, bucket: Rollup.bucket(sample.start.milliseconds)),
                        start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
                case .cumulative:
                    cumulativeChanges.inserted(
                        typeID: entry.typeID, sourceID: entry.sourceID, deviceID: entry.deviceID,
                        subjectID: entry.subjectID, start: sample.start.milliseconds, end: sample.end.milliseconds,
                        value: sample.value, seq: entry.seq)
                case .series, .category, .notAggregated:
                    break
                }
            } else {
                outcomes[entry.index] =
                    stored.value == sample.value && stored.subjectID == entry.subjectID ? .duplicate : .conflict
            }
        }
        for (index, leader) in followers {
            let stored = reference[leader]
            let subjectID = try subjectID(connection, samples[index].subject)
            outcomes[index] =
                stored.value == samples[index].value && stored.subjectID == subjectID ? .duplicate : .conflict
        }
        var spans: [Int64: Int64] = [:]
        for (position, entry) in staged.enumerated() where reference[position].inserted {
            let sample = samples[entry.index]
            spans[entry.typeID] = max(spans[entry.typeID] ?? 0, sample.end.milliseconds - sample.start.milliseconds)
        }
        for (typeID, span) in spans { try noteSpan(connection, typeID: typeID, span: span) }
        return outcomes
    }

    /// Fills the staging table with the staged samples (emptied first when an earlier batch of the transaction
    /// left its rows there).
    private func stage(
        _ connection: PostgresConnection, _ samples: [QuantitySample], _ staged: [Staged], writer: String
    )
        throws
    {
        if stagingFilled { try connection.run("TRUNCATE staging") }
        stagingFilled = true
        switch bulkMethod {
        case .copy:
            var buffer = CopyBuffer(capacity: staged.count * 120)
            for entry in staged {
                let sample = samples[entry.index]
                buffer.field(Int64(entry.index))
                buffer.field(entry.typeID)
                buffer.field(sample.start.milliseconds)
                buffer.field(sample.end.milliseconds)
                buffer.field(entry.sourceID)
                buffer.field(entry.deviceID)
                buffer.field(entry.subjectID)
                buffer.field(sample.id.uuidString)
                buffer.field(Int64(sample.startOffsetSeconds))
                buffer.field(sample.value)
                buffer.field(writer)
                buffer.field(entry.seq)
                buffer.field(encodedMetadata(sample.metadata))
                buffer.endRow()
            }
            try connection.copy(
                """
                COPY staging (idx, type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s,
                    value, writer, seq, metadata) FROM STDIN
                """, data: buffer.bytes)
        case .arrays:
            let metadata = staged.map { encodedMetadata(samples[$0.index].metadata) }
            try connection.query(
                """
                INSERT INTO staging (idx, type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid,
                    start_offset_s, value, writer, seq, metadata)
                SELECT i, t, s, e, so, d, sj, u, o, v, $11, q, m
                FROM unnest($1::integer[], $2::integer[], $3::bigint[], $4::bigint[], $5::integer[], $6::integer[],
                    $7::integer[], $8::uuid[], $9::integer[], $10::float8[], $12::bigint[], $13::text[])
                    AS x (i, t, s, e, so, d, sj, u, o, v, q, m)
                """,
                [
                    PostgresText.array(staged.map(\.index)), PostgresText.array(staged.map(\.typeID)),
                    PostgresText.array(staged.map { samples[$0.index].start.milliseconds }),
                    PostgresText.array(staged.map { samples[$0.index].end.milliseconds }),
                    PostgresText.array(staged.map(\.sourceID)), PostgresText.array(staged.map(\.deviceID)),
                    PostgresText.array(staged.map(\.subjectID)),
                    "{" + staged.map { samples[$0.index].id.uuidString }.joined(separator: ",") + "}",
                    PostgresText.array(staged.map { samples[$0.index].startOffsetSeconds }),
                    PostgresText.array(staged.map { samples[$0.index].value }), writer,
                    PostgresText.array(staged.map(\.seq)), PostgresText.nullableArray(metadata),
                ])
        }
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
                WHERE source_id = $1 AND type_id = $2 AND external_uuid = $3
                """, ["\(sourceID)", "\(typeID)", externalUUID])
            if stored.count > 0 {
                let storedVersion = stored.int64(0, 1)
                if version < storedVersion { return .stale }
                if version == storedVersion {
                    let same =
                        stored.int64(0, 2) == start && stored.int64(0, 3) == end && stored.double(0, 4) == sample.value
                        && stored.int64(0, 5) == deviceID && stored.int64(0, 6) == subjectID
                    return same ? .duplicate : .conflict
                }
                let old = UUID(uuidString: stored.text(0, 0) ?? "") ?? UUID()
                try remove(connection, uuid: old, typeID: typeID, writer: writer, replacedBy: sample.id)
                try insert(connection, sample, (typeID, sourceID, deviceID, subjectID), writer: writer, external)
                return .replaced
            }
        } else {
            let stored = try connection.query(
                """
                SELECT value, subject_id FROM samples
                WHERE type_id = $1 AND start_ms = $2 AND source_id = $3 AND device_id = $4 AND end_ms = $5
                    AND external_uuid IS NULL
                """, ["\(typeID)", "\(start)", "\(sourceID)", "\(deviceID)", "\(end)"])
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
