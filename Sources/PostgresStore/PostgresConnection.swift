internal import CLibPQ
import Foundation
internal import Glibc

/// One libpq connection (`PGconn *`), finished in `deinit`.
///
/// Every statement with values is a prepared statement (`PQprepare` once per connection and SQL text, then
/// `PQexecPrepared`), parameters and results in text format. Scripts without values (the schema, `BEGIN`) go
/// through ``run(_:)``. Not thread-safe and deliberately not `Sendable`: the store confines its connection to one
/// serial executor, never the cooperative pool (libpq calls block).
final class PostgresConnection {
    private let pq: PQ
    private let handle: OpaquePointer
    /// Prepared statements: SQL text to statement name.
    private var prepared: [String: String] = [:]

    /// Connects with a libpq connection string or `postgresql://` URL.
    init(_ conninfo: String) throws(PostgresError) {
        let pq: PQ
        switch PQ.loaded {
        case .success(let functions): pq = functions
        case .failure(let error): throw error
        }
        guard let handle = pq.connectdb(conninfo) else {
            throw PostgresError(code: .connection, message: "libpq could not allocate a connection")
        }
        guard pq.status(handle) == CONNECTION_OK else {
            let message = Self.trimmed(pq.errorMessage(handle))
            pq.finish(handle)
            throw PostgresError(code: .connection, message: "cannot connect: \(message)")
        }
        // Notices (`relation already exists, skipping`) would go to stderr; the engine has nothing to say about them.
        _ = pq.setNoticeProcessor(handle, { _, _ in }, nil)
        self.pq = pq
        self.handle = handle
    }

    deinit {
        pq.finish(handle)
    }

    /// Whether libpq considers the connection lost.
    var isBroken: Bool { pq.status(handle) != CONNECTION_OK }

    /// The server's version number, e.g. 150018.
    var serverVersion: Int { Int(pq.serverVersion(handle)) }

    /// Runs a script without parameters (several statements allowed): the schema, transaction control.
    func run(_ sql: String) throws(PostgresError) {
        let result = pq.exec(handle, sql)
        defer { pq.clear(result) }
        try check(result, sql: sql, expecting: [PGRES_COMMAND_OK, PGRES_TUPLES_OK])
    }

    /// The rows of a statement's `result`, which is cleared when the statement failed.
    private func rows(of result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresRows {
        do {
            try check(result, sql: sql, expecting: [PGRES_COMMAND_OK, PGRES_TUPLES_OK])
        } catch {
            pq.clear(result)
            throw error
        }
        guard let result else { throw PostgresError(code: .unexpected, message: "no result", sql: sql) }
        return PostgresRows(pq: pq, result: result)
    }

    /// Runs one statement without parameters that PostgreSQL cannot prepare (`FETCH` from a cursor) and returns its
    /// rows.
    func rows(_ sql: String) throws(PostgresError) -> PostgresRows {
        let result = pq.exec(handle, sql)
        return try rows(of: result, sql: sql)
    }

    /// Runs `sql` as a prepared statement with `parameters` (text, `nil` for NULL) and returns its rows, in text
    /// format, or with `binary` in binary format (read with ``PostgresRows/binaryInteger(_:_:)`` and
    /// ``PostgresRows/binaryDouble(_:_:)``: no number is printed by the server and parsed here).
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = [], binary: Bool = false) throws(PostgresError)
        -> PostgresRows
    {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count)"
            let result = pq.prepare(handle, name, sql, Int32(parameters.count), nil)
            defer { pq.clear(result) }
            try check(result, sql: sql, expecting: [PGRES_COMMAND_OK])
            prepared[sql] = name
        }
        let result = Self.withCStrings(parameters) { values in
            pq.execPrepared(handle, name, Int32(parameters.count), values, nil, nil, binary ? 1 : 0)
        }
        return try rows(of: result, sql: sql)
    }

    /// `COPY ... FROM STDIN` with `data` in COPY's text format; returns the number of rows copied.
    @discardableResult
    func copy(_ sql: String, data: [UInt8]) throws(PostgresError) -> Int {
        let start = pq.exec(handle, sql)
        let status = pq.resultStatus(start)
        pq.clear(start)
        guard status == PGRES_COPY_IN else {
            throw PostgresError(code: .statement, message: "COPY did not start: \(lastMessage)", sql: sql)
        }
        var offset = 0
        var sent = true
        data.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { bytes in
                while offset < buffer.count, sent {
                    let length = min(buffer.count - offset, 1 << 18)
                    sent = pq.putCopyData(handle, bytes + offset, Int32(length)) == 1
                    offset += length
                }
            }
        }
        let ended = pq.putCopyEnd(handle, sent ? nil : "client failed to send") == 1
        var failure: PostgresError?
        var rows = 0
        while let result = pq.getResult(handle) {
            if failure == nil {
                do throws(PostgresError) {
                    try check(result, sql: sql, expecting: [PGRES_COMMAND_OK])
                    rows = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
                } catch {
                    failure = error
                }
            }
            pq.clear(result)
        }
        if let failure { throw failure }
        guard sent, ended else {
            throw PostgresError(code: .connection, message: "COPY failed: \(lastMessage)", sql: sql)
        }
        return rows
    }

    /// `text` quoted as an SQL identifier.
    func identifier(_ text: String) -> String {
        let utf8 = Array(text.utf8)
        guard
            let escaped = utf8.withUnsafeBufferPointer({ buffer in
                buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    pq.escapeIdentifier(handle, $0, buffer.count)
                }
            })
        else { return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        defer { pq.freemem(escaped) }
        return String(cString: escaped)
    }

    private var lastMessage: String { Self.trimmed(pq.errorMessage(handle)) }

    private func check(_ result: OpaquePointer?, sql: String, expecting: [ExecStatusType]) throws(PostgresError) {
        guard let result else {
            throw PostgresError(code: .connection, message: lastMessage, sql: sql)
        }
        let status = pq.resultStatus(result)
        guard !expecting.contains(status) else { return }
        let state = pq.resultErrorField(result, PQ.fieldSQLState).map { String(cString: $0) }
        let message =
            pq.resultErrorField(result, PQ.fieldMessage).map { String(cString: $0) }
            ?? Self.trimmed(pq.resultErrorMessage(result))
        // A lost connection shows as a fatal error without SQLSTATE.
        let code: PostgresError.Code = state == nil && isBroken ? .connection : .statement
        throw PostgresError(code: code, sqlState: state, message: message, sql: sql)
    }

    private static func trimmed(_ message: UnsafeMutablePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Calls `body` with a C array of NUL-terminated copies of `values` (NULL for `nil`).
    private static func withCStrings<Result>(
        _ values: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result
    ) -> Result {
        var storage: [CChar] = []
        var offsets: [Int?] = []
        offsets.reserveCapacity(values.count)
        for value in values {
            guard let value else {
                offsets.append(nil)
                continue
            }
            offsets.append(storage.count)
            storage.append(contentsOf: value.utf8.map { CChar(bitPattern: $0) })
            storage.append(0)
        }
        return storage.withUnsafeBufferPointer { buffer in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                guard let offset, let base = buffer.baseAddress else { return nil }
                return base + offset
            }
            return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}

/// The rows of one result (`PGresult *`), cleared in `deinit`. Values come in text format.
final class PostgresRows {
    private let pq: PQ
    private let result: OpaquePointer
    let count: Int

    init(pq: PQ, result: OpaquePointer) {
        self.pq = pq
        self.result = result
        count = Int(pq.ntuples(result))
    }

    deinit {
        pq.clear(result)
    }

    /// The number of rows the command touched (`PQcmdTuples`), for INSERT, UPDATE and DELETE.
    var affected: Int {
        pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        pq.getisnull(result, Int32(row), Int32(column)) != 0
    }

    func text(_ row: Int, _ column: Int) -> String? {
        guard !isNull(row, column), let value = pq.getvalue(result, Int32(row), Int32(column)) else { return nil }
        return String(cString: value)
    }

    func int64(_ row: Int, _ column: Int) -> Int64 {
        guard let value = pq.getvalue(result, Int32(row), Int32(column)) else { return 0 }
        return strtoll(value, nil, 10)
    }

    func optionalInt64(_ row: Int, _ column: Int) -> Int64? {
        isNull(row, column) ? nil : int64(row, column)
    }

    /// A `double precision` value: PostgreSQL prints the shortest text that reads back exactly, and `strtod`
    /// rounds correctly, so the value is the one stored.
    func double(_ row: Int, _ column: Int) -> Double {
        guard let value = pq.getvalue(result, Int32(row), Int32(column)) else { return 0 }
        return strtod(value, nil)
    }

    /// An `integer` or `bigint` value of a binary result (network order); 0 for NULL or another length.
    func binaryInteger(_ row: Int, _ column: Int) -> Int64 {
        guard let value = pq.getvalue(result, Int32(row), Int32(column)) else { return 0 }
        switch pq.getlength(result, Int32(row), Int32(column)) {
        case 8: return Int64(bigEndian: UnsafeRawPointer(value).loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: UnsafeRawPointer(value).loadUnaligned(as: Int32.self)))
        default: return 0
        }
    }

    /// A `double precision` value of a binary result, bit for bit; 0 for NULL.
    func binaryDouble(_ row: Int, _ column: Int) -> Double {
        guard let value = pq.getvalue(result, Int32(row), Int32(column)),
            pq.getlength(result, Int32(row), Int32(column)) == 8
        else { return 0 }
        return Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(value).loadUnaligned(as: UInt64.self)))
    }

    /// The bytes of a value of a binary result (valid while these rows live); `nil` for NULL.
    func binaryBytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        guard !isNull(row, column), let value = pq.getvalue(result, Int32(row), Int32(column)) else { return nil }
        return UnsafeRawBufferPointer(start: value, count: Int(pq.getlength(result, Int32(row), Int32(column))))
    }

    func optionalDouble(_ row: Int, _ column: Int) -> Double? {
        isNull(row, column) ? nil : double(row, column)
    }

    func bool(_ row: Int, _ column: Int) -> Bool {
        pq.getvalue(result, Int32(row), Int32(column))?.pointee == CChar(UInt8(ascii: "t"))
    }

    /// A `bytea` value (hex output: `\x0a1b...`).
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column), let value = pq.getvalue(result, Int32(row), Int32(column)) else { return nil }
        let length = Int(pq.getlength(result, Int32(row), Int32(column)))
        guard length >= 2 else { return [] }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { text in
            var bytes: [UInt8] = []
            bytes.reserveCapacity((length - 2) / 2)
            var index = 2
            while index + 1 < length {
                bytes.append(PostgresText.nibble(text[index]) << 4 | PostgresText.nibble(text[index + 1]))
                index += 2
            }
            return bytes
        }
    }
}

/// Values as PostgreSQL's text format reads them.
enum PostgresText {
    static func bytea(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A float8 value: Swift prints the shortest text that reads back exactly.
    static func double(_ value: Double) -> String { "\(value)" }

    /// An array literal of numbers, e.g. `{1,2,3}`.
    static func array(_ values: some Sequence<some BinaryInteger>) -> String {
        "{" + values.map { "\($0)" }.joined(separator: ",") + "}"
    }

    static func array(_ values: [Double]) -> String {
        "{" + values.map(double).joined(separator: ",") + "}"
    }

    /// An array literal of strings, each quoted.
    static func array(_ values: [String]) -> String {
        "{"
            + values.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }.joined(separator: ",") + "}"
    }

    /// An array literal of strings and NULLs.
    static func nullableArray(_ values: [String?]) -> String {
        "{"
            + values.map { $0.map { array([$0]).dropFirst().dropLast() }.map(String.init) ?? "NULL" }
            .joined(separator: ",") + "}"
    }

    static func nibble(_ character: UInt8) -> UInt8 {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}

/// Rows in COPY's binary format (`COPY ... FROM STDIN (FORMAT binary)`): the header, then per row its field count
/// and each field as a length and its bytes in network order, then the trailer (``finished()``). Each value must
/// have exactly its column's type: `integer` 4 bytes, `bigint` and `double precision` 8, `uuid` 16, `text` its
/// UTF-8 bytes. Nothing is formatted or escaped, and a double goes over bit for bit.
struct CopyBinaryBuffer {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(19 + capacity + 2)
        bytes += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        append(UInt32(0))  // flags
        append(UInt32(0))  // header extension length
    }

    private mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Starts a row of `fields` fields.
    mutating func row(fields: Int16) {
        withUnsafeBytes(of: UInt16(bitPattern: fields).bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func int32(_ value: Int32) {
        append(UInt32(4))
        append(UInt32(bitPattern: value))
    }

    mutating func int64(_ value: Int64) {
        append(UInt32(8))
        append(UInt64(bitPattern: value))
    }

    mutating func double(_ value: Double) {
        append(UInt32(8))
        append(value.bitPattern)
    }

    mutating func uuid(_ value: UUID) {
        append(UInt32(16))
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    /// A `text` value's UTF-8 bytes.
    mutating func bytes(_ value: [UInt8]) {
        append(UInt32(value.count))
        bytes += value
    }

    /// A `text` value, or NULL.
    mutating func text(_ value: String?) {
        guard let value else {
            append(UInt32(bitPattern: -1))
            return
        }
        append(UInt32(value.utf8.count))
        bytes += value.utf8
    }

    /// The rows with the trailer.
    func finished() -> [UInt8] {
        bytes + [0xFF, 0xFF]
    }
}
