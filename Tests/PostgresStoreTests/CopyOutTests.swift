import Foundation
import TestSupport
import Testing

@testable import PostgresStore

/// `COPY ... TO STDOUT (FORMAT binary)` as ``PostgresConnection/copyOut(_:_:row:)`` reads it (what `export` and
/// `samples` read from PostgreSQL): every field as the server sent it, parameters inlined as literals, and every way
/// the data or the caller can go wrong an error, never rows silently missing.
@Suite struct CopyOutTests {
    /// A connection to a fresh database of the tests' server, and the database's name (dropped by the caller).
    static func connect() throws -> (PostgresConnection, String) {
        let server = try PostgresServer.shared()
        let url = try server.createDatabase()
        let database = String(try #require(url.split(separator: "=").last))
        return (try PostgresConnection(url), database)
    }

    static func drop(_ database: String) {
        _ = try? PostgresServer.shared().psql("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
    }

    @Test func everyFieldComesAsTheServerSentIt() throws {
        let (connection, database) = try Self.connect()
        defer { Self.drop(database) }
        let id = UUID()
        let doubles: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.infinity, 1.0000000000000002, -123.456,
        ]
        // One row per double, with the extremes of each integer type and a uuid, NULLs and text.
        let values = doubles.enumerated().map { index, value in
            "(\(index), '\(value)'::float8, '\(Int64.min)'::bigint, \(Int64.max)::bigint, '\(Int32.min)'::integer, "
                + "\(Int32.max)::integer, '\(id.uuidString)'::uuid, \(index % 2 == 0 ? "NULL" : "'zoë \"q\"\\n'")::text)"
        }.joined(separator: ", ")
        var rows: [(Int64, Double, Int64, Int64, Int64, Int64, UUID, String?)] = []
        let count = try connection.copyOut(
            "SELECT * FROM (VALUES \(values)) v(n, d, lo, hi, small, large, id, t) ORDER BY n"
        ) { row in
            rows.append(
                (
                    try row.integer("n"), try row.double("d"), try row.integer("lo"), try row.integer("hi"),
                    try row.integer("small"), try row.integer("large"), try row.uuid("id"),
                    try row.next("t").map { String(decoding: $0, as: UTF8.self) }
                ))
        }
        #expect(count == doubles.count)
        #expect(rows.count == doubles.count)
        for (index, row) in rows.enumerated() {
            #expect(row.0 == Int64(index))
            #expect(row.1.bitPattern == doubles[index].bitPattern)
            #expect(row.2 == Int64.min && row.3 == Int64.max)
            #expect(row.4 == Int64(Int32.min) && row.5 == Int64(Int32.max))
            #expect(row.6 == id)
            #expect(row.7 == (index % 2 == 0 ? nil : "zoë \"q\"\\n"))
        }
        // Doubles as the server's own float8 values, bit for bit (NaN too).
        var floats: [Double] = []
        try connection.copyOut("SELECT x FROM unnest(ARRAY[$1, $2, $3, 'NaN']::float8[]) x", ["-0", "5e-324", "1e308"])
        {
            floats.append(try $0.double("x"))
        }
        let expected: [Double] = [-0.0, .leastNonzeroMagnitude, 1e308]
        #expect(floats.prefix(3).map(\.bitPattern) == expected.map(\.bitPattern))
        #expect(floats.last?.isNaN == true)
        // No rows: the header and the trailer only.
        #expect(try connection.copyOut("SELECT 1 WHERE false") { _ in Issue.record("a row from nothing") } == 0)
    }

    @Test func parametersAreInlinedAsLiteralsOnce() throws {
        let (connection, database) = try Self.connect()
        defer { Self.drop(database) }
        // Quotes, backslashes, placeholders and non-ASCII in the values; $10 is not $1 followed by 0.
        let values: [String?] = [
            "it's", #"back\slash $2 \' $1"#, nil, "ö\n\t", "", "$3", "7", "8", "9", "ten",
        ]
        var texts: [String?] = []
        try connection.copyOut(
            "SELECT unnest(ARRAY[$1, $2, $3, $4, $5, $6, $7, $8, $9, $10]::text[]) AS t", values
        ) { row in
            texts.append(try row.next("t").map { String(decoding: $0, as: UTF8.self) })
        }
        #expect(texts == values)
        #expect(connection.inlined("a $1 $2 $x $ $0 $3", ["1"]) == "a '1' $2 $x $ $0 $3")
    }

    @Test func aStatementSentDuringACopyIsAnError() throws {
        let (connection, database) = try Self.connect()
        defer { Self.drop(database) }
        // libpq drops the rest of a COPY when another statement is sent: that must not look like the end of the rows.
        var seen = 0
        #expect(throws: PostgresError.self) {
            try connection.copyOut("SELECT generate_series(1, 100000)") { row in
                seen += 1
                if seen == 2 { _ = try? connection.query("SELECT 1") }
                _ = try row.integer("n")
            }
        }
        #expect(seen < 100_000)
        // The connection goes on.
        #expect(try connection.query("SELECT 41 + 1").int64(0, 0) == 42)
    }

    @Test func aFailingRowEndsTheCopyWithItsErrorAndTheConnectionGoesOn() throws {
        let (connection, database) = try Self.connect()
        defer { Self.drop(database) }
        struct Refused: Error {}
        var seen = 0
        #expect(throws: Refused.self) {
            try connection.copyOut("SELECT generate_series(1, 50000)") { row in
                seen += 1
                _ = try row.integer("n")
                if seen == 3 { throw Refused() }
            }
        }
        #expect(seen == 3)
        // A row whose fields are not all read, or read as the wrong type, is an error too.
        #expect(throws: PostgresError.self) {
            try connection.copyOut("SELECT 1::bigint, 2::bigint") { row in _ = try row.integer("first") }
        }
        #expect(throws: PostgresError.self) {
            try connection.copyOut("SELECT 'abc'::text") { row in _ = try row.uuid("t") }
        }
        #expect(throws: PostgresError.self) {
            try connection.copyOut("SELECT NULL::bigint") { row in _ = try row.integer("n") }
        }
        // A statement the server refuses.
        #expect(throws: PostgresError.self) { try connection.copyOut("SELECT * FROM no_such_table") { _ in } }
        #expect(try connection.copyOut("SELECT generate_series(1, 3)") { _ = try $0.integer("n") } == 3)
    }

    /// Messages no server sends, read as rows: each an error naming what is wrong, never a read past the bytes.
    @Test func malformedRowsAreErrors() throws {
        func row(_ bytes: [UInt8], reading fields: Int = 0) throws {
            try bytes.withUnsafeBytes { buffer in
                var row = try CopyBinaryRow(buffer, row: 1)
                for _ in 0..<fields { _ = try row.next("field") }
                try row.finish()
            }
        }
        func int16(_ value: Int16) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        // Sound: two fields, one NULL.
        try row(int16(2) + int32(3) + [1, 2, 3] + int32(-1), reading: 2)
        for (bytes, fields) in [
            ([0x00], 0),  // shorter than a field count
            (int16(-2), 0),  // a negative count other than the trailer's
            (int16(-1) + [0], 0),  // bytes after the trailer
            (int16(1) + int32(4) + [1, 2], 1),  // a field longer than the row
            (int16(1) + [0, 0], 1),  // a length cut short
            (int16(1) + int32(-7), 1),  // a negative length
            (int16(1) + int32(Int32.max), 1),  // a length past any row
            (int16(1) + int32(1) + [9], 2),  // more fields read than the row has
            (int16(2) + int32(1) + [9], 1),  // fewer read than it has
            (int16(1) + int32(1) + [9, 9], 1),  // bytes after the last field
        ] as [([UInt8], Int)] {
            #expect(throws: PostgresError.self, "\(bytes)") { try row(bytes, reading: fields) }
        }
        // The header: the signature, flags without critical bits, an extension within the message.
        let header = CopyBinaryRow.signature + int32(0) + int32(0)
        let rest = try (header + int16(0)).withUnsafeBytes { try CopyBinaryRow.skippingHeader($0).count }
        #expect(rest == 2)
        for bytes in [
            Array(header.prefix(18)), Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x01] + int32(0) + int32(0),
            CopyBinaryRow.signature + int32(0x0001_0000) + int32(0), CopyBinaryRow.signature + int32(0) + int32(5),
        ] {
            #expect(throws: PostgresError.self) {
                _ = try bytes.withUnsafeBytes { try CopyBinaryRow.skippingHeader($0) }
            }
        }
    }
}
