import Foundation
import SQLiteStore

/// A Gadgetbridge database opened read only (`SQLITE_OPEN_READONLY`, then `PRAGMA query_only`), through the
/// store's own connection type (Sources/SQLiteStore/SQLiteConnection.swift): nothing this module does can write
/// to it. When no `-wal` file lies beside it (an exported copy), it is opened `immutable`, so that SQLite creates
/// no `-wal` or `-shm` file beside it either, even when the database is in WAL mode; with one, SQLite reads the
/// WAL too, which needs its `-shm` index (created if absent).
final class GadgetbridgeFile {
    let connection: SQLiteConnection
    let path: String

    init(path: String) throws(GadgetbridgeError) {
        self.path = path
        do {
            if FileManager.default.fileExists(atPath: path + "-wal") {
                connection = try SQLiteConnection(path: path, readOnly: true)
            } else {
                connection = try SQLiteConnection(path: Self.immutableURI(path), readOnly: true, uri: true)
            }
            try connection.execute("PRAGMA query_only = 1")
        } catch {
            throw GadgetbridgeError("cannot open \(path) read only: \(error.message)")
        }
    }

    /// The database's tables, by name.
    func tableNames() throws(GadgetbridgeError) -> Set<String> {
        Set(try texts("SELECT name FROM sqlite_master WHERE type = 'table'"))
    }

    /// The columns of `table`, upper-cased.
    func columns(of table: String) throws(GadgetbridgeError) -> Set<String> {
        Set(try texts("SELECT name FROM pragma_table_info(\(Self.literal(table)))").map { $0.uppercased() })
    }

    func count(_ table: String, where condition: String = "") throws(GadgetbridgeError) -> Int64 {
        let sql = "SELECT COUNT(*) FROM \(Self.identifier(table))" + (condition.isEmpty ? "" : " WHERE " + condition)
        do {
            return try connection.scalarInt(sql) ?? 0
        } catch {
            throw GadgetbridgeError("\(path): cannot count the rows of \(table): \(error.message)")
        }
    }

    func prepare(_ sql: String) throws(GadgetbridgeError) -> SQLiteStatement {
        do {
            return try connection.prepare(sql)
        } catch {
            throw GadgetbridgeError("\(path): \(error.message)")
        }
    }

    private func texts(_ sql: String) throws(GadgetbridgeError) -> [String] {
        do {
            return try connection.texts(sql)
        } catch {
            throw GadgetbridgeError("\(path) is not a readable SQLite database: \(error.message)")
        }
    }

    /// `path` as an SQLite URI of an immutable, read-only file (`?`, `#` and `%` escaped).
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:" + escaped + "?mode=ro&immutable=1"
    }

    /// `name` as an SQL identifier, quoted.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

@available(*, unavailable, message: "a connection belongs to one reader")
extension GadgetbridgeFile: Sendable {}

extension String {
    /// At most `bytes` bytes of UTF-8, cut at a character boundary.
    func prefix(bytes: Int) -> String {
        guard utf8.count > bytes else { return self }
        var result = ""
        for character in self {
            guard result.utf8.count + character.utf8.count <= bytes else { break }
            result.append(character)
        }
        return result
    }
}
