public import Health
internal import StoreEngine

extension SQLiteHealthStore {
    public func requestAuthorization(app: String, read: [String], share: [String]) throws -> Bool {
        defer { connection.resetCachedStatements() }
        let asked = read.map { ($0, "read") } + share.map { ($0, "share") }
        let anyPending = try connection.transaction {
            let insert = try connection.cached(
                """
                INSERT OR IGNORE INTO authorization_requests (app, type, direction, pending, requested_ms)
                VALUES (?1, ?2, ?3, 1, ?4)
                """)
            let state = try connection.cached(
                "SELECT pending FROM authorization_requests WHERE app = ?1 AND type = ?2 AND direction = ?3")
            var anyPending = false
            for (type, direction) in asked {
                guard let known = HealthTypeCatalog.type(type) else { continue }
                let granted = direction == "read" ? try canRead(.app(app), known) : try canShare(.app(app), known)
                if granted { continue }  // nothing to ask
                insert.reset()
                try insert.bind(1, app)
                try insert.bind(2, type)
                try insert.bind(3, direction)
                try insert.bind(4, now().milliseconds)
                try insert.step()
                state.reset()
                try state.bind(1, app)
                try state.bind(2, type)
                try state.bind(3, direction)
                if try state.step(), state.int64(0) != 0 { anyPending = true }
            }
            return anyPending
        }
        try log(.app(app), .request, type: nil, count: asked.count, denied: false)
        return anyPending
    }

    public func recordAccess(_ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?) throws {
        try log(caller, operation, type: type, count: 0, denied: false)
    }

    public func typesWithNewSamples(since anchor: Int64?) throws -> (types: Set<String>, anchor: Int64) {
        defer { connection.resetCachedStatements() }
        let current = try connection.scalarInt("SELECT value FROM counters WHERE name = 'seq'") ?? 0
        guard let anchor, current > anchor else { return ([], current) }
        var types: Set<String> = []
        let known = try connection.cached("SELECT id, identifier FROM types")
        var identifiers: [(Int64, String)] = []
        while try known.step() { identifiers.append((known.int64(0), known.text(1) ?? "")) }
        let rows = try connection.cached("SELECT 1 FROM samples WHERE type_id = ?1 AND seq > ?2 LIMIT 1")
        let chunks = try connection.cached("SELECT 1 FROM series_chunks WHERE type_id = ?1 AND last_seq > ?2 LIMIT 1")
        let objects = try connection.cached("SELECT 1 FROM objects WHERE type_id = ?1 AND seq > ?2 LIMIT 1")
        for (id, identifier) in identifiers {
            for statement in [rows, chunks, objects] {
                statement.reset()
                try statement.bind(1, id)
                try statement.bind(2, anchor)
                if try statement.step() {
                    types.insert(identifier)
                    break
                }
            }
        }
        let heartbeats = try connection.cached("SELECT 1 FROM heartbeat_series WHERE id > ?1 LIMIT 1")
        try heartbeats.bind(1, anchor)
        if try heartbeats.step() { types.insert(HealthType.heartbeatSeries.identifier) }
        return (types, current)
    }
}
