public import Health
internal import StoreEngine

/// Characteristics (`docs/store-semantics.md`, item 26), in the `characteristics` table (migration 3).
extension PostgresHealthStore {
    /// Every person the store names (``HealthStoreEngine/subjects()``).
    public func subjects() throws -> [String] {
        try withConnection { connection in
            let rows = try connection.query(subjectsQuery)
            return (0..<rows.count).compactMap { rows.text($0, 0) }
        }
    }

    public func characteristics(of subject: String?, as caller: Caller) throws -> Characteristics {
        try withConnection { connection in
            let rows = try connection.query(
                "SELECT type, value FROM characteristics WHERE subject = $1", [subject ?? ""])
            var stored: [String: String] = [:]
            for row in 0..<rows.count {
                if let type = rows.text(row, 0), let value = rows.text(row, 1) { stored[type] = value }
            }
            var result = Characteristics()
            for type in HealthTypeCatalog.types(of: .characteristic) {
                let readable = try canRead(connection, caller, type)
                if readable, let text = stored[type.identifier],
                    let value = try? Characteristics.Value(
                        parsing: text, for: type, today: Instant(milliseconds: Instant.supportedMilliseconds.upperBound)
                    )
                {
                    result.values[type.identifier] = value
                }
                try log(
                    connection, caller, .query, type: type.identifier,
                    count: readable && result.values[type.identifier] != nil ? 1 : 0, denied: !readable)
            }
            return result
        }
    }

    public func setCharacteristic(
        _ type: HealthType, to value: Characteristics.Value?, of subject: String?, as caller: Caller
    ) throws {
        guard type.kind == .characteristic else { throw CharacteristicError.notACharacteristic(type.identifier) }
        guard case .owner = caller else {
            try withConnection { connection in
                try log(connection, caller, .save, type: type.identifier, count: 0, denied: true)
            }
            throw NotAuthorizedError(caller: caller, type: type.identifier)
        }
        try writeTransaction { connection in
            if let value {
                try connection.query(
                    """
                    INSERT INTO characteristics (subject, type, value, updated_ms) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (subject, type) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms
                    """, [subject ?? "", type.identifier, value.text(for: type), "\(now().milliseconds)"])
            } else {
                try connection.query(
                    "DELETE FROM characteristics WHERE subject = $1 AND type = $2", [subject ?? "", type.identifier])
            }
            try log(connection, caller, value == nil ? .delete : .save, type: type.identifier, count: 1, denied: false)
        }
    }
}
