public import Health
internal import StoreEngine

/// Apps' permission requests and the observers' change feed, with the SQLite engine's semantics.
extension PostgresHealthStore {
    public func requestAuthorization(app: String, read: [String], share: [String]) throws -> Bool {
        let asked = read.map { ($0, "read") } + share.map { ($0, "share") }
        return try writeTransaction { connection in
            var anyPending = false
            for (type, direction) in asked {
                guard let known = HealthTypeCatalog.type(type) else { continue }
                let granted =
                    direction == "read"
                    ? try canRead(connection, .app(app), known) : try canShare(connection, .app(app), known)
                if granted { continue }  // nothing to ask
                try connection.query(
                    """
                    INSERT INTO authorization_requests (app, type, direction, pending, requested_ms)
                    VALUES ($1, $2, $3, true, $4) ON CONFLICT DO NOTHING
                    """, [app, type, direction, "\(now().milliseconds)"])
                let state = try connection.query(
                    "SELECT pending FROM authorization_requests WHERE app = $1 AND type = $2 AND direction = $3",
                    [app, type, direction])
                if state.count > 0, state.bool(0, 0) { anyPending = true }
            }
            try log(connection, .app(app), .request, type: nil, count: asked.count, denied: false)
            return anyPending
        }
    }

    public func recordAccess(_ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?) throws {
        try withConnection { try log($0, caller, operation, type: type, count: 0, denied: false) }
    }

    /// One read of the write-order counter when nothing changed. Otherwise the types with samples numbered in
    /// `(anchor, current]`: writers publish the counter with their rows in one commit, so every row up to
    /// `current` is visible; rows a writer commits meanwhile are numbered above it and reported next time.
    public func typesWithNewSamples(since anchor: Int64?) throws -> (types: Set<String>, anchor: Int64) {
        try withConnection { connection in
            let counter = try connection.query("SELECT value FROM counters WHERE name = 'seq'")
            let current = counter.count > 0 ? counter.int64(0, 0) : 0
            guard let anchor, current > anchor else { return ([], current) }
            let rows = try connection.query(
                """
                SELECT identifier FROM types t
                WHERE EXISTS (SELECT 1 FROM samples s WHERE s.type_id = t.id AND s.seq > $1 AND s.seq <= $2)
                    OR EXISTS (SELECT 1 FROM objects o WHERE o.type_id = t.id AND o.seq > $1 AND o.seq <= $2)
                UNION ALL
                SELECT $3::text WHERE EXISTS (SELECT 1 FROM heartbeat_series WHERE seq > $1 AND seq <= $2)
                """, ["\(anchor)", "\(current)", HealthType.heartbeatSeries.identifier])
            return (Set((0..<rows.count).compactMap { rows.text($0, 0) }), current)
        }
    }
}
