internal import CLibPQ
import Foundation
internal import Glibc

/// One libpq connection (`PGconn *`), finished in `deinit`.
///
/// Every statement with values is a prepared statement (`PQprepare` once per connection and SQL text, then
/// `PQexecPrepared`), parameters and results in text format, except a binary COPY out (``copyOut(_:_:row:)``, whose
/// values are inlined as literals). Scripts without values (the schema, `BEGIN`) go through ``run(_:)``. Not
/// thread-safe and deliberately not `Sendable`: the store confines its connection to one serial executor, never the
/// cooperative pool (libpq calls block).
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

    /// `COPY (<query>) TO STDOUT (FORMAT binary)` of `query`, its `$n` placeholders replaced by `parameters` as
    /// quoted literals (``inlined(_:_:)``: COPY takes no parameters), handing each row to `row` as it arrives (the
    /// server sends while the rows are read; no result is held). Each row is one COPY message: its field count, then
    /// per field a length (-1 for NULL) and the bytes (``CopyBinaryRow``). Returns the number of rows. When `row`
    /// throws, the rest of the rows are read and dropped (so that the connection stays usable) and the error thrown.
    /// `row` must not use the connection: a statement sent while the rows come would end the COPY (libpq drops the
    /// rest), which is reported as an error.
    @discardableResult
    func copyOut(
        _ query: String, _ parameters: [String?] = [], row: (inout CopyBinaryRow) throws -> Void
    ) throws -> Int {
        let sql = "COPY (\(inlined(query, parameters))) TO STDOUT (FORMAT binary)"
        let start = pq.exec(handle, sql)
        let status = pq.resultStatus(start)
        if status != PGRES_COPY_OUT {
            defer { pq.clear(start) }
            try check(start, sql: sql, expecting: [PGRES_COPY_OUT])
        }
        pq.clear(start)
        var rows = 0
        var header = true
        var failure: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = pq.getCopyData(handle, &buffer, 0)
            if length == -2, failure == nil {
                // The connection failed, or another statement was sent (libpq then drops the rest of the rows).
                failure = PostgresError(code: .connection, message: "COPY stopped: \(lastMessage)", sql: sql)
            }
            guard length >= 0 else { break }  // -1: the end; the statement's result follows
            guard let buffer else { continue }
            defer { pq.freemem(buffer) }
            guard failure == nil else { continue }
            do {
                var bytes = UnsafeRawBufferPointer(start: buffer, count: Int(length))
                if header {
                    // The signature, flags and header extension come with the first row.
                    bytes = try CopyBinaryRow.skippingHeader(bytes)
                    header = false
                }
                var fields = try CopyBinaryRow(bytes, row: rows + 1)
                if fields.isTrailer { continue }
                try row(&fields)
                try fields.finish()
                rows += 1
            } catch {
                failure = error
            }
        }
        var statementFailure: PostgresError?
        while let result = pq.getResult(handle) {
            if statementFailure == nil {
                do throws(PostgresError) {
                    try check(result, sql: sql, expecting: [PGRES_COMMAND_OK])
                } catch {
                    statementFailure = error
                }
            }
            pq.clear(result)
        }
        if let statementFailure { throw statementFailure }
        if let failure { throw failure }
        return rows
    }

    /// `sql` with each `$n` placeholder replaced by the n-th of `parameters` as a quoted literal (`PQescapeLiteral`),
    /// `NULL` for `nil`: for statements that take no parameters (COPY). One pass, so that a literal's own text is
    /// never read as a placeholder. A placeholder without its parameter is left as it is (the server refuses it).
    func inlined(_ sql: String, _ parameters: [String?]) -> String {
        let literals = parameters.map { $0.map(literal) ?? "NULL" }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let bytes = Array(sql.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + literals.reduce(0) { $0 + $1.utf8.count })
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$") {
                var end = index + 1
                var number = 0
                while end < bytes.count, end - index <= 9, digits.contains(bytes[end]) {
                    number = number * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                    end += 1
                }
                if end > index + 1, number >= 1, number <= literals.count {
                    result += literals[number - 1].utf8
                    index = end
                    continue
                }
            }
            result.append(bytes[index])
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// `text` quoted as an SQL string literal (`PQescapeLiteral`: `'it''s'`, or `E'...'` with backslashes).
    func literal(_ text: String) -> String {
        escaped(text, quote: "'") { pq.escapeLiteral(handle, $0, $1) }
    }

    /// `text` quoted as an SQL identifier (`PQescapeIdentifier`).
    func identifier(_ text: String) -> String {
        escaped(text, quote: "\"") { pq.escapeIdentifier(handle, $0, $1) }
    }

    /// `text` escaped and quoted by libpq (`escape`: bytes and length in, a string libpq allocated out). Only when
    /// libpq runs out of memory or the text is not valid in the client encoding (never for a Swift string in UTF-8)
    /// is it quoted by hand: `quote` around it, doubled inside.
    private func escaped(
        _ text: String, quote: String, _ escape: (UnsafePointer<CChar>, Int) -> UnsafeMutablePointer<CChar>?
    ) -> String {
        let escaped = Array(text.utf8).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                chars.baseAddress.flatMap { escape($0, chars.count) } ?? escape("", 0)
            }
        }
        guard let escaped else { return quote + text.replacingOccurrences(of: quote, with: quote + quote) + quote }
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

/// One row of `COPY ... TO STDOUT (FORMAT binary)` (``PostgresConnection/copyOut(_:_:row:)``): its fields read in
/// order, each checked against the bytes there are, so that a short or malformed message is an error naming the row
/// and field, never a read past its end.
struct CopyBinaryRow {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 2
    /// The field count the row announces; -1 for the trailer that ends the data.
    let fieldCount: Int
    /// The row's number (from 1), for messages.
    let row: Int
    /// The number of the next field (from 1), for messages.
    private var field = 1

    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    init(_ bytes: UnsafeRawBufferPointer, row: Int) throws(PostgresError) {
        guard bytes.count >= 2 else { throw Self.error("row \(row) has \(bytes.count) bytes") }
        self.bytes = bytes
        self.row = row
        fieldCount = Int(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self)))
        guard fieldCount >= -1 else { throw Self.error("row \(row) announces \(fieldCount) fields") }
        if fieldCount == -1, bytes.count != 2 {
            throw Self.error("the trailer after row \(row - 1) is followed by \(bytes.count - 2) bytes")
        }
    }

    /// The bytes after the header of the first message (signature, flags, header extension).
    static func skippingHeader(_ bytes: UnsafeRawBufferPointer) throws(PostgresError) -> UnsafeRawBufferPointer {
        guard bytes.count >= 19, bytes.prefix(11).elementsEqual(signature) else {
            throw error("the data does not start with COPY's binary signature")
        }
        let flags = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 11, as: UInt32.self))
        guard flags & 0xFFFF_0000 == 0 else {
            throw error("the header has critical flags 0x\(String(flags, radix: 16))")
        }
        let extensionLength = Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 15, as: UInt32.self)))
        guard extensionLength <= bytes.count - 19 else { throw error("the header extension runs past the data") }
        return UnsafeRawBufferPointer(rebasing: bytes[(19 + extensionLength)...])
    }

    var isTrailer: Bool { fieldCount == -1 }

    /// The next field's bytes, `nil` for NULL (valid while the row is).
    mutating func next(_ name: String) throws(PostgresError) -> UnsafeRawBufferPointer? {
        guard field <= fieldCount else { throw Self.error("row \(row) has no field \(field) (\(name))") }
        guard bytes.count - offset >= 4 else { throw Self.error("row \(row) ends before field \(field) (\(name))") }
        let length = Int(Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
        offset += 4
        field += 1
        if length == -1 { return nil }
        guard length >= 0, length <= bytes.count - offset else {
            throw Self.error("row \(row): field \(field - 1) (\(name)) has a length of \(length), past the row's end")
        }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }

    /// A `bigint` or `integer` field.
    mutating func integer(_ name: String) throws(PostgresError) -> Int64 {
        guard let value = try next(name) else { throw Self.error("row \(row): \(name) is NULL") }
        switch value.count {
        case 8: return Int64(bigEndian: value.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: value.loadUnaligned(as: Int32.self)))
        default: throw Self.error("row \(row): \(name) has \(value.count) bytes")
        }
    }

    /// A `double precision` field, bit for bit.
    mutating func double(_ name: String) throws(PostgresError) -> Double {
        guard let value = try next(name) else { throw Self.error("row \(row): \(name) is NULL") }
        guard value.count == 8 else { throw Self.error("row \(row): \(name) has \(value.count) bytes") }
        return Double(bitPattern: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
    }

    /// A `uuid` field: its 16 bytes.
    mutating func uuid(_ name: String) throws(PostgresError) -> UUID {
        guard let value = try next(name) else { throw Self.error("row \(row): \(name) is NULL") }
        guard value.count == 16 else { throw Self.error("row \(row): \(name) has \(value.count) bytes") }
        return UUID(uuid: value.loadUnaligned(as: uuid_t.self))
    }

    /// Checks that every field was read.
    func finish() throws(PostgresError) {
        guard field > fieldCount else {
            throw Self.error("row \(row) has \(fieldCount) fields, \(field - 1) expected")
        }
        guard offset == bytes.count else {
            throw Self.error("row \(row) has \(bytes.count - offset) bytes after its last field")
        }
    }

    private static func error(_ message: String) -> PostgresError {
        PostgresError(code: .unexpected, message: "COPY data: " + message)
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
