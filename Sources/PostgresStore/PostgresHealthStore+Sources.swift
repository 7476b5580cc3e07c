public import Health
internal import StoreEngine

/// The source query, as in the SQLite engine: who wrote a type, from the sample rows and the heartbeat series.
extension PostgresHealthStore {
    public func sources(of type: HealthType, as caller: Caller) throws -> [SourceSummary] {
        try withConnection { connection in
            let typeID = try existingTypeID(connection, type.identifier)
            guard typeID != nil || type == .heartbeatSeries else {
                try log(connection, caller, .query, type: type.identifier, count: 0, denied: false)
                return []
            }
            // An app that may not read the type sees its own samples only.
            var own: String?
            if case .app(let app) = caller, try !canRead(connection, caller, type) { own = app }
            let writer = own == nil ? "" : " AND writer = $2"
            var parts = [
                "SELECT source_id, device_id, count(*) AS n, min(start_ms) AS first, max(end_ms) AS last "
                    + "FROM samples WHERE type_id = $1\(writer) GROUP BY source_id, device_id"
            ]
            if type == .heartbeatSeries {
                parts.append(
                    "SELECT source_id, device_id, count(*), min(start_ms), max(end_ms) FROM heartbeat_series "
                        + "WHERE $1::bigint IS NOT NULL\(writer) GROUP BY source_id, device_id")
            }
            let rows = try connection.query(
                """
                SELECT so.identifier, d.key, d.name, sum(x.n)::bigint, min(x.first), max(x.last)
                FROM (\(parts.joined(separator: " UNION ALL "))) x
                JOIN sources so ON so.id = x.source_id
                LEFT JOIN devices d ON d.id = x.device_id AND x.device_id != 0
                GROUP BY so.identifier, d.key, d.name
                """, ["\(typeID ?? -1)"] + (own.map { [$0] } ?? []))
            let summaries = SourceSummary.combined(
                (0..<rows.count).map { row in
                    SourceSummary(
                        provenance: Provenance(source: rows.text(row, 0) ?? "", device: rows.text(row, 1)),
                        deviceName: rows.text(row, 2), count: Int(rows.int64(row, 3)),
                        first: Instant(milliseconds: rows.int64(row, 4)),
                        last: Instant(milliseconds: rows.int64(row, 5)))
                })
            try log(connection, caller, .query, type: type.identifier, count: summaries.count, denied: false)
            return summaries
        }
    }
}
