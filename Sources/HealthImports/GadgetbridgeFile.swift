import Foundation
import SQLiteStore

/// A Gadgetbridge database opened read only (`SQLITE_OPEN_READONLY`, then `PRAGMA query_only`), through the
/// store's own connection type (Sources/SQLiteStore/SQLiteConnection.swift): nothing this module does can write
/// to it.
final class GadgetbridgeFile {
    let connection: SQLiteConnection
    let path: String

    init(path: String) throws(GadgetbridgeError) {
        self.path = path
        do {
            connection = try SQLiteConnection(path: path, readOnly: true)
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
