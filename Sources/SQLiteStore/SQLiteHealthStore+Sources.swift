public import Health
internal import StoreEngine

/// The source query: who wrote a type, from the rows, the chunks and the heartbeat series.
extension SQLiteHealthStore {
    public func sources(of type: HealthType, as caller: Caller) throws -> [SourceSummary] {
        // Heartbeat series are in a table of their own, whether or not the type has an id.
        let typeID = try existingTypeID(type.identifier)
        guard typeID != nil || type == .heartbeatSeries else {
            try log(caller, .query, type: type.identifier, count: 0, denied: false)
            return []
        }
        // An app that may not read the type sees its own rows only; chunks are the owner's, never an app's.
        var own: String?
        if case .app(let app) = caller, try !canRead(caller, type) { own = app }
        let writer = own == nil ? "" : " AND writer = ?2"
        var parts = [
            "SELECT source_id, device_id, count(*) AS n, min(start_ms) AS first, max(end_ms) AS last FROM samples "
                + "WHERE type_id = ?1\(writer) GROUP BY source_id, device_id"
        ]
        if own == nil {
            parts.append(
                "SELECT source_id, device_id, sum(count), min(start_ms), max(end_ms) FROM series_chunks "
                    + "WHERE type_id = ?1 GROUP BY source_id, device_id")
        }
        if type == .heartbeatSeries {
            parts.append(
                "SELECT source_id, device_id, count(*), min(start_ms), max(end_ms) FROM heartbeat_series "
                    + "WHERE 1\(writer) GROUP BY source_id, device_id")
        }
        let statement = try connection.prepare(
            """
            SELECT so.identifier, d.key, d.name, sum(x.n), min(x.first), max(x.last)
            FROM (\(parts.joined(separator: " UNION ALL "))) x
            JOIN sources so ON so.id = x.source_id
            LEFT JOIN devices d ON d.id = x.device_id AND x.device_id != 0
            GROUP BY so.identifier, d.key, d.name
            """)
        try statement.bind(1, typeID ?? -1)
        if let own { try statement.bind(2, own) }
        var found: [SourceSummary] = []
        while try statement.step() {
            found.append(
                SourceSummary(
                    provenance: Provenance(source: statement.text(0) ?? "", device: statement.text(1)),
                    deviceName: statement.text(2), count: Int(statement.int64(3)),
                    first: Instant(milliseconds: statement.int64(4)), last: Instant(milliseconds: statement.int64(5))))
        }
        let summaries = SourceSummary.combined(found)
        try log(caller, .query, type: type.identifier, count: summaries.count, denied: false)
        return summaries
    }
}
