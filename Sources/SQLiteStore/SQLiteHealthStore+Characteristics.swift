public import Health
internal import StoreEngine

/// Characteristics (`docs/store-semantics.md`, item 26), in the `characteristics` table (migration 12).
extension SQLiteHealthStore {
    /// Every person the store names (``HealthStoreEngine/subjects()``).
    public func subjects() throws -> [String] {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(subjectsQuery)
        var names: [String] = []
        while try statement.step() { if let name = statement.text(0) { names.append(name) } }
        return names
    }

    public func characteristics(of subject: String?, as caller: Caller) throws -> Characteristics {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached("SELECT type, value FROM characteristics WHERE subject = ?1")
        try statement.bind(1, subject ?? "")
        var stored: [String: String] = [:]
        while try statement.step() {
            if let type = statement.text(0), let value = statement.text(1) { stored[type] = value }
        }
        var result = Characteristics()
        for type in HealthTypeCatalog.types(of: .characteristic) {
            let readable = try canRead(caller, type)
            if readable, let text = stored[type.identifier],
                let value = try? Characteristics.Value(
                    parsing: text, for: type, today: Instant(milliseconds: Instant.supportedMilliseconds.upperBound))
            {
                result.values[type.identifier] = value
            }
            try log(
                caller, .query, type: type.identifier, count: readable && result.values[type.identifier] != nil ? 1 : 0,
                denied: !readable)
        }
        return result
    }

    public func setCharacteristic(
        _ type: HealthType, to value: Characteristics.Value?, of subject: String?, as caller: Caller
    ) throws {
        defer { connection.resetCachedStatements() }
        guard type.kind == .characteristic else { throw CharacteristicError.notACharacteristic(type.identifier) }
        guard case .owner = caller else {
            try log(caller, .save, type: type.identifier, count: 0, denied: true)
            throw NotAuthorizedError(caller: caller, type: type.identifier)
        }
        try connection.transaction {
            if let value {
                let statement = try connection.cached(
                    """
                    INSERT INTO characteristics (subject, type, value, updated_ms) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (subject, type) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms
                    """)
                try statement.bind(1, subject ?? "")
                try statement.bind(2, type.identifier)
                try statement.bind(3, value.text(for: type))
                try statement.bind(4, now().milliseconds)
                try statement.step()
            } else {
                let statement = try connection.cached("DELETE FROM characteristics WHERE subject = ?1 AND type = ?2")
                try statement.bind(1, subject ?? "")
                try statement.bind(2, type.identifier)
                try statement.step()
            }
        }
        try log(caller, value == nil ? .delete : .save, type: type.identifier, count: 1, denied: false)
    }
}
