import Foundation
public import Health
internal import StoreEngine

extension SQLiteHealthStore {
    /// Saves a batch in one transaction (`docs/store-semantics.md`, items 21-23).
    public func save(_ samples: [QuantitySample], as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        let typeCounts = try checkedTypeCounts(samples)
        var checked: Set<String> = []
        for (type, _) in typeCounts where checked.insert(type.identifier).inserted { try requireShare(caller, type) }
        return try writeTransaction { try insertSamples(samples, typeCounts, caller) }
    }

    /// The catalog's type of each run of samples of one type, with the run's length; an unknown type or an invalid
    /// sample rejects the batch (``InvalidSampleError`` with the sample's place in `samples`).
    func checkedTypeCounts(_ samples: [QuantitySample]) throws -> [(type: HealthType, count: Int)] {
        // Samples of a batch mostly share type, source, device and subject: runs of equal values are looked up
        // once (this path handles hundreds of thousands of samples a second).
        var typeCounts: [(type: HealthType, count: Int)] = []
        for (index, sample) in samples.enumerated() {
            if let last = typeCounts.last, last.type.identifier == sample.type.identifier {
                typeCounts[typeCounts.count - 1].count += 1
            } else {
                guard let known = HealthTypeCatalog.type(sample.type.identifier) else {
                    throw InvalidSampleError(index: index, reason: "unknown type '\(sample.type.identifier)'")
                }
                typeCounts.append((known, 1))
            }
            if let reason = Self.invalidity(of: sample, type: typeCounts[typeCounts.count - 1].type) {
                throw InvalidSampleError(index: index, reason: reason)
            }
        }
        return typeCounts
    }

    /// Stores checked samples (``checkedTypeCounts(_:)``) inside the running write transaction and logs the save,
    /// per type.
    func insertSamples(
        _ samples: [QuantitySample], _ typeCounts: [(type: HealthType, count: Int)], _ caller: Caller
    ) throws -> [WriteOutcome] {
        var outcomes = [WriteOutcome](repeating: .rejected, count: samples.count)
        // Write order follows the batch: the sample at position i gets sequence number base + 1 + i, whether it
        // becomes a row or a chunk's point, as on PostgreSQL (the merge breaks ties by write order).
        let base = try lastSequence()
        try reserveSequence(through: base + Int64(samples.count))
        // Dense series go into chunks, grouped by stream; everything else is a row.
        var streams = StreamGroups()
        var previous: (sample: QuantitySample, key: StreamKey)?
        var run = (index: 0, left: typeCounts.first?.count ?? 0)  // the catalog's type of each sample
        for (index, sample) in samples.enumerated() {
            if run.left == 0 { run = (run.index + 1, typeCounts[run.index + 1].count) }
            run.left -= 1
            let type = typeCounts[run.index].type
            guard isSeriesSample(sample, type, caller) else {
                outcomes[index] = try save(
                    sample, index: index, writer: caller.description, sequence: base + 1 + Int64(index))
                continue
            }
            let key: StreamKey
            if let previous, previous.sample.sharesStream(with: sample) {
                key = previous.key
            } else {
                key = try streamKey(
                    type: type, source: sample.source, device: sample.device, subject: sample.subject,
                    offset: sample.startOffsetSeconds, metadata: sample.metadata)
                previous = (sample, key)
            }
            streams.append(
                key, start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value,
                position: index)
        }
        try saveSeries(streams, into: &outcomes, sequenceBase: base)
        var logged: [String: Int] = [:]
        for (type, count) in typeCounts { logged[type.identifier, default: 0] += count }
        for (type, count) in logged.sorted(by: { $0.key < $1.key }) {
            try log(caller, .save, type: type, count: count, denied: false)
        }
        return outcomes
    }

    /// Saves a batch in one transaction: its streams' samples, then its heartbeat series. Outcomes (and the index
    /// of an ``InvalidSampleError``) follow ``SampleBatch/samples`` then ``SampleBatch/heartbeats``.
    ///
    /// The gateway's path: a stream's type, source, device, subject and metadata are looked up once, its samples
    /// go into chunks straight from the columns, and no sample id is made.
    public func save(_ batch: SampleBatch, as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        let catalogued = try QuantitySeries.catalogued(batch.quantities)  // each stream's type as the catalog has it
        var types: [HealthType] = []
        for known in catalogued where !types.contains(where: { $0.identifier == known.identifier }) {
            types.append(known)
        }
        for type in types { try requireShare(caller, type) }
        if !batch.heartbeats.isEmpty { try checkHeartbeats(batch.heartbeats, firstIndex: batch.quantityCount, caller) }
        return try writeTransaction {
            var outcomes = [WriteOutcome](repeating: .rejected, count: batch.quantityCount)
            // Write order follows the batch's samples, as in save([QuantitySample]).
            let base = try lastSequence()
            try reserveSequence(through: base + Int64(batch.quantityCount))
            var streams = StreamGroups()
            var logged: [String: Int] = [:]
            var position = 0
            for (series, type) in zip(batch.quantities, catalogued) {
                logged[type.identifier, default: 0] += series.count
                if caller == .owner, Self.externalID(series.metadata) == nil {
                    let key = try streamKey(
                        type: type, source: series.source, device: series.device, subject: series.subject,
                        offset: series.startOffsetSeconds, metadata: series.metadata)
                    streams.append(key, series, firstPosition: position)
                } else {
                    for index in 0..<series.count {
                        outcomes[position + index] = try save(
                            series.sample(at: index), index: position + index, writer: caller.description,
                            sequence: base + 1 + Int64(position + index))
                    }
                }
                position += series.count
            }
            try saveSeries(streams, into: &outcomes, sequenceBase: base)
            for (type, count) in logged.sorted(by: { $0.key < $1.key }) {
                try log(caller, .save, type: type, count: count, denied: false)
            }
            if !batch.heartbeats.isEmpty {
                outcomes += try insertHeartbeats(batch.heartbeats, firstIndex: position, caller)
            }
            if !batch.identified.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) { try save(batch.identified, as: caller) }
            }
            if !batch.correlations.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) {
                    try save(batch.correlations, as: caller)
                }
            }
            if !batch.workouts.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) {
                    try save(batch.workouts, as: caller)
                }
            }
            return outcomes
        }
    }

    /// Refuses (and logs) a save of `type` by a caller without share permission.
    func requireShare(_ caller: Caller, _ type: HealthType) throws {
        guard try canShare(caller, type) else {
            try log(caller, .save, type: type.identifier, count: 0, denied: true)
            throw NotAuthorizedError(caller: caller, type: type.identifier)
        }
    }

    /// The chunk stream of samples with these fields, its dimension rows created when new.
    func streamKey(
        type: HealthType, source: Source, device: Device?, subject: String?, offset: Int32,
        metadata: [String: MetadataValue]
    ) throws -> StreamKey {
        StreamKey(
            typeID: try typeID(type.identifier), sourceID: try sourceID(source), deviceID: try deviceID(device),
            subjectID: try subjectID(subject), offset: offset, metadata: encodedMetadata(metadata),
            discrete: type.aggregation == .discrete, cumulative: type.aggregation == .cumulative)
    }

    /// Why `sample`, of the catalog's `type`, cannot be stored, or `nil` when it can.
    static func invalidity(of sample: QuantitySample, type: HealthType) -> String? {
        sample.invalidityReason(as: type)
    }

    private func save(_ sample: QuantitySample, index: Int, writer: String, sequence: Int64) throws -> WriteOutcome {
        let typeID = try typeID(sample.type.identifier)
        let sourceID = try sourceID(sample.source)
        let deviceID = try deviceID(sample.device)
        let subjectID = try subjectID(sample.subject)
        let external = Self.externalID(sample)

        if let existing = try storedSample(uuid: sample.id) {
            // The same sample written again keeps its row; a uuid naming another sample rejects the batch.
            guard existing.typeID == typeID, existing.start == sample.start.milliseconds,
                existing.end == sample.end.milliseconds
            else {
                throw InvalidSampleError(index: index, reason: "uuid \(sample.id) already names a different sample")
            }
            return existing.value == sample.value && existing.subjectID == subjectID ? .duplicate : .conflict
        }

        if let (externalUUID, version) = external {
            let lookup = try connection.cached(
                """
                SELECT uuid, version, start_ms, end_ms, value, device_id, subject_id
                FROM samples INDEXED BY samples_external
                WHERE \(try sourceCondition(sourceID, 1)) AND type_id = ?2 AND external_uuid = ?3
                ORDER BY version DESC, seq
                """)
            try lookup.bind(1, sourceID)
            try lookup.bind(2, typeID)
            try lookup.bind(3, externalUUID)
            if try lookup.step() {
                let storedVersion = lookup.int64(1)
                if version < storedVersion { return .stale }
                if version == storedVersion {
                    let same =
                        lookup.int64(2) == sample.start.milliseconds && lookup.int64(3) == sample.end.milliseconds
                        && lookup.double(4) == sample.value && lookup.int64(5) == deviceID
                        && lookup.int64(6) == subjectID
                    return same ? .duplicate : .conflict
                }
                // Every sample of the client id goes: a store written before versions shared client ids may
                // hold one under each version.
                var replaced = [lookup.blob(0) ?? []]
                while try lookup.step() { replaced.append(lookup.blob(0) ?? []) }
                lookup.reset()
                for uuid in replaced {
                    try remove(uuid: uuid, typeID: typeID, writer: writer, replacedBy: sample.id.bytes)
                }
                try insert(
                    sample, typeID, sourceID, deviceID, subjectID, writer: writer, external: external,
                    sequence: sequence)
                return .replaced
            }
        } else {
            let lookup = try connection.cached(
                """
                SELECT value, subject_id FROM samples INDEXED BY samples_natural
                WHERE type_id = ?1 AND \(try sourceCondition(sourceID, 2)) AND device_id = ?3 AND start_ms = ?4
                    AND end_ms = ?5 AND external_uuid IS NULL
                """)
            try lookup.bind(1, typeID)
            try lookup.bind(2, sourceID)
            try lookup.bind(3, deviceID)
            try lookup.bind(4, sample.start.milliseconds)
            try lookup.bind(5, sample.end.milliseconds)
            if try lookup.step() {
                return lookup.double(0) == sample.value && lookup.int64(1) == subjectID ? .duplicate : .conflict
            }
            let start = sample.start.milliseconds
            let end = sample.end.milliseconds
            for chunk in try chunks(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, from: start, to: end, anyVersion: true)
            {
                if let point = chunk.points.first(where: { $0.start == start && $0.start + $0.duration == end }) {
                    return point.value == sample.value && chunk.key.subjectID == subjectID ? .duplicate : .conflict
                }
            }
        }
        try insert(
            sample, typeID, sourceID, deviceID, subjectID, writer: writer, external: external, sequence: sequence)
        return .inserted
    }

    /// The id of the stored sample that `sample` was found to be again (its outcome `.duplicate`): its own id when
    /// that is stored, else that of the stored sample of its client id or natural key, under any version of its
    /// source: a row's own id, or the id a chunk's point derives from the key.
    func storedID(duplicating sample: QuantitySample) throws -> UUID {
        if try storedSample(uuid: sample.id) != nil { return sample.id }
        let typeID = try typeID(sample.type.identifier)
        let sourceID = try sourceID(sample.source)
        let lookup: SQLiteStatement
        if let (externalUUID, _) = Self.externalID(sample) {
            lookup = try connection.cached(
                """
                SELECT uuid FROM samples INDEXED BY samples_external
                WHERE \(try sourceCondition(sourceID, 1)) AND type_id = ?2 AND external_uuid = ?3
                ORDER BY version DESC, seq LIMIT 1
                """)
            try lookup.bind(1, sourceID)
            try lookup.bind(2, typeID)
            try lookup.bind(3, externalUUID)
        } else {
            lookup = try connection.cached(
                """
                SELECT uuid FROM samples INDEXED BY samples_natural
                WHERE type_id = ?1 AND \(try sourceCondition(sourceID, 2)) AND device_id = ?3 AND start_ms = ?4
                    AND end_ms = ?5 AND external_uuid IS NULL
                """)
            try lookup.bind(1, typeID)
            try lookup.bind(2, sourceID)
            try lookup.bind(3, try deviceID(sample.device))
            try lookup.bind(4, sample.start.milliseconds)
            try lookup.bind(5, sample.end.milliseconds)
        }
        defer { lookup.reset() }
        if try lookup.step(), let id = lookup.blob(0).flatMap(UUID.init(bytes:)) { return id }
        return QuantitySample.derivedID(
            type: sample.type.identifier, source: sample.source.identifier, device: sample.device?.key,
            start: sample.start, end: sample.end)
    }

    /// `(externalUUID, syncVersion)` from the metadata, when the sample carries a client id.
    static func externalID(_ sample: QuantitySample) -> (String, Int64)? {
        externalID(sample.metadata)
    }

    /// `(externalUUID, syncVersion)` from metadata that carries a client id.
    static func externalID(_ metadata: [String: MetadataValue]) -> (String, Int64)? {
        guard !metadata.isEmpty, case .string(let external)? = metadata[MetadataKey.externalUUID] else {
            return nil
        }
        return (external, metadata.syncVersion)
    }

    private func storedSample(uuid: UUID) throws -> (
        typeID: Int64, start: Int64, end: Int64, value: Double, subjectID: Int64
    )? {
        let statement = try connection.cached(
            "SELECT type_id, start_ms, end_ms, value, subject_id FROM samples WHERE uuid = ?1")
        try statement.bind(1, uuid.bytes)
        guard try statement.step() else { return nil }
        return (statement.int64(0), statement.int64(1), statement.int64(2), statement.double(3), statement.int64(4))
    }

    private func insert(
        _ sample: QuantitySample, _ typeID: Int64, _ sourceID: Int64, _ deviceID: Int64, _ subjectID: Int64,
        writer: String, external: (String, Int64)?, sequence: Int64
    ) throws {
        let statement = try connection.cached(
            """
            INSERT INTO samples (type_id, start_ms, uuid, end_ms, start_offset_s, value, source_id, device_id,
                subject_id, writer, external_uuid, version, seq, metadata)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """)
        try statement.bind(1, typeID)
        try statement.bind(2, sample.start.milliseconds)
        try statement.bind(3, sample.id.bytes)
        try statement.bind(4, sample.end.milliseconds)
        try statement.bind(5, Int64(sample.startOffsetSeconds))
        try statement.bind(6, sample.value)
        try statement.bind(7, sourceID)
        try statement.bind(8, deviceID)
        try statement.bind(9, subjectID)
        try statement.bind(10, writer)
        try statement.bind(11, external?.0)
        try statement.bind(12, external?.1)
        try statement.bind(13, sequence)
        try statement.bind(14, encodedMetadata(sample.metadata))
        try statement.step()
        switch sample.type.aggregation {
        case .discrete:
            noteInserted(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID,
                start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
        case .cumulative:
            cumulativeChanges.inserted(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID,
                start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value, seq: sequence)
        case .series, .category, .notAggregated:
            break
        }
    }

    /// Deletes one stored sample and leaves its tombstone.
    func remove(uuid: [UInt8], typeID: Int64, writer: String, replacedBy: [UInt8]?) throws {
        let aggregation = try aggregation(typeID: typeID)
        if aggregation == .discrete || aggregation == .cumulative {
            let lookup = try connection.cached(
                "SELECT source_id, device_id, subject_id, start_ms, end_ms FROM samples WHERE uuid = ?1")
            try lookup.bind(1, uuid)
            if try lookup.step() {
                if aggregation == .discrete {
                    noteRemoved(
                        typeID: typeID, sourceID: lookup.int64(0), deviceID: lookup.int64(1),
                        subjectID: lookup.int64(2), start: lookup.int64(3))
                } else {
                    cumulativeChanges.removed(
                        typeID: typeID, sourceID: lookup.int64(0), deviceID: lookup.int64(1),
                        subjectID: lookup.int64(2), start: lookup.int64(3), end: lookup.int64(4))
                }
            }
        }
        let delete = try connection.cached("DELETE FROM samples WHERE uuid = ?1")
        try delete.bind(1, uuid)
        try delete.step()
        try tombstone(uuid: uuid, typeID: typeID, writer: writer, replacedBy: replacedBy)
    }

    /// Records that sample `uuid` is gone, for ``changes(of:since:limit:as:)``.
    func tombstone(uuid: [UInt8], typeID: Int64, writer: String, replacedBy: [UInt8]?) throws {
        let tombstone = try connection.cached(
            "INSERT INTO tombstones (seq, type_id, uuid, writer, deleted_ms, replaced_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        )
        try tombstone.bind(1, try nextSequence())
        try tombstone.bind(2, typeID)
        try tombstone.bind(3, uuid)
        try tombstone.bind(4, writer)
        try tombstone.bind(5, now().milliseconds)
        try tombstone.bind(6, replacedBy)
        try tombstone.step()
    }
}

extension QuantitySample {
    /// Whether `other` goes into the same series chunk stream as this sample.
    func sharesStream(with other: QuantitySample) -> Bool {
        type.identifier == other.type.identifier && source == other.source && device == other.device
            && subject == other.subject && startOffsetSeconds == other.startOffsetSeconds && metadata == other.metadata
    }
}

extension SQLiteHealthStore {
    /// Saves the batches `next` hands out in one write transaction (``HealthStoreEngine/saveAll(as:_:)``). The
    /// transaction's pages beyond SQLite's page cache go to the WAL as it runs, so memory stays at one batch; the
    /// WAL holds the new pages until the commit, and is checkpointed after it.
    public func saveAll(as caller: Caller, _ next: @Sendable () throws -> SampleBatch?) throws -> [WriteOutcome: Int] {
        defer { connection.resetCachedStatements() }
        let counts = try writeTransaction {
            // Counted in a short list rather than by hashing each sample's outcome into the dictionary (that took
            // 7 % of an import of flat lines).
            var tally: [(outcome: WriteOutcome, count: Int)] = []
            while let batch = try next() {
                for outcome in try save(batch, as: caller) {
                    if let index = tally.firstIndex(where: { $0.outcome == outcome }) {
                        tally[index].count += 1
                    } else {
                        tally.append((outcome, 1))
                    }
                }
                try flushRollups()
            }
            return Dictionary(uniqueKeysWithValues: tally.map { ($0.outcome, $0.count) })
        }
        try? checkpoint()
        return counts
    }
}
