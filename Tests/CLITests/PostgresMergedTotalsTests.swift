import Foundation
import Support
import TestSupport
import Testing

/// `merged_totals(...)` (PostgreSQL schema 6, docs/sql.md), the merge in SQL for other tools, against `wearhouse
/// stats`: the same buckets and sums on random overlapping samples of several sources, devices and subjects, for
/// every kind of priority the person can set, in calendar days and weeks across a DST change, read by a role that
/// may only SELECT.
@Suite struct PostgresMergedTotalsTests {
    static let sources = [
        (source: "com.example.watch", device: "AA:BB:CC:00:00:01" as String?),
        (source: "com.example.watch", device: "AA:BB:CC:00:00:02"), (source: "com.example.phone", device: nil),
        (source: "wearhouse", device: "AA:BB:CC:00:00:03"), (source: "wearhouse", device: nil),
    ]

    /// Random step samples over 2025-03-24...2025-04-04 (Europe/Berlin's spring change on the 30th): intervals of
    /// up to three hours, some instants, some zero values, three subjects (one of them nobody).
    static func lines(seed: UInt64, count: Int) -> String {
        var random = SplitMix64(seed: seed)
        let first = 1_742_770_800  // 2025-03-24T00:00:00+01:00
        var lines: [String] = []
        for _ in 0..<count {
            let start = first + Int(random.next() % (11 * 86_400 / 60)) * 60
            let length = random.next() % 5 == 0 ? 0 : Int(random.next() % 180 + 1) * 60
            let value = random.next() % 10 == 0 ? 0 : Int(random.next() % 2_000)
            let provenance = random.pick(sources)
            var fields = [
                "\"type\":\"stepCount\"", "\"start\":\"\(isoUTC(start))\"", "\"end\":\"\(isoUTC(start + length))\"",
                "\"value\":\(value)", "\"source\":\"\(provenance.source)\"",
            ]
            if let device = provenance.device { fields.append("\"device\":\"\(device)\"") }
            switch random.next() % 3 {
            case 0: fields.append("\"subject\":\"alice\"")
            case 1: fields.append("\"subject\":\"bob\"")
            default: break
            }
            lines.append("{" + fields.joined(separator: ",") + "}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One bucket: its start (epoch seconds), the sum over subjects and the winning provenances.
    struct Bucket: Equatable, CustomStringConvertible {
        var start: Int64
        var sum: Double
        var sources: Set<String>
        var description: String { "\(start): \(sum) \(sources.sorted())" }
    }

    /// Each line of `stats --json` with its bucket's start (epoch seconds).
    static func statsLines(_ output: String) throws -> [(start: Int64, fields: [String: Any])] {
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try output.split(separator: "\n").map { line in
            let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let fields = try #require(parsed as? [String: Any], "\(line)")
            let text = try #require(fields["start"] as? String, "\(line)")
            let start = try #require(parser.date(from: text), "\(line)")
            return (Int64(start.timeIntervalSince1970), fields)
        }
    }

    /// The buckets `stats --json` printed (buckets without a sum left out, as merged_totals has no row for them).
    static func statsBuckets(_ output: String) throws -> [Bucket] {
        try statsLines(output).compactMap { start, fields in
            guard let sum = fields["sum"] as? Double else { return nil }
            let sources = try #require(fields["sources"] as? [String])
            return Bucket(start: start, sum: sum, sources: Set(sources))
        }
    }

    /// merged_totals' rows (one per subject), added up per bucket.
    static func sqlBuckets(_ output: String) -> [Bucket] {
        var buckets: [Int64: Bucket] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let start = Int64(fields[0]), let total = Double(fields[1]) else { continue }
            let names = fields[2].split(separator: ",").map(String.init)
            buckets[start, default: Bucket(start: start, sum: 0, sources: [])].sum += total
            buckets[start]?.sources.formUnion(names)
        }
        return buckets.values.sorted { $0.start < $1.start }
    }

    static func close(_ lhs: [Bucket], _ rhs: [Bucket]) -> Bool {
        lhs.count == rhs.count
            && zip(lhs, rhs).allSatisfy { a, b in
                a.start == b.start && a.sources == b.sources && abs(a.sum - b.sum) <= 1e-6 * max(1, abs(a.sum))
            }
    }

    @Test(arguments: [0x5EED_0001, 0x5EED_0002] as [UInt64])
    func theSQLMergeEqualsStatsForEveryPriority(seed: UInt64) throws {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        let name = String(conninfo.split(separator: "=").last ?? "")
        let url = server.url(database: name)
        let imported = try WearhouseRunner.run(
            ["import-samples", "--store", url, "-"], stdin: Self.lines(seed: seed, count: 400))
        #expect(imported.status == 0, "\(imported.stderr)")
        let role = "merge_\(name.suffix(8))"
        try server.psql("CREATE ROLE \(role) LOGIN")
        try server.psql(
            "GRANT CONNECT ON DATABASE \(name) TO \(role); GRANT USAGE ON SCHEMA public TO \(role); "
                + "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)", database: name)
        let reader = server.conninfo(database: name).replacingOccurrences(of: "user=wearhouse", with: "user=\(role)")

        let priorities: [[String]] = [
            [],
            ["set", "stepCount", "com.example.watch,wearhouse"],
            ["set", "stepCount", "wearhouse[],com.example.watch[AA:BB:CC:00:00:02]", "--unranked", "exclude"],
            ["set", "default", "com.example.phone,wearhouse[AA:BB:CC:00:00:03]"],
            ["set", "default", "com.example.phone", "--unranked", "exclude"],
        ]
        for priority in priorities {
            if !priority.isEmpty {
                _ = try WearhouseRunner.run(["priority", "reset", "stepCount", "--store", url])
                let set = try WearhouseRunner.run(["priority"] + priority + ["--store", url])
                #expect(set.status == 0, "\(priority): \(set.stderr)")
            }
            for (interval, step) in [("1d", "day"), ("1w", "week")] {
                let stats = try WearhouseRunner.run([
                    "stats", "--type", "stepCount", "--interval", interval, "--from", "2025-03-25", "--to",
                    "2025-04-03T12:00", "--time-zone", "Europe/Berlin", "--json", "--store", url,
                ])
                #expect(stats.status == 0, "\(stats.stderr)")
                let sql = try WearhouseRunner.runTool(
                    "/usr/bin/psql",
                    [
                        reader, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c",
                        "SELECT extract(epoch FROM bucket_start)::bigint, total, array_to_string(sources, ',') "
                            + "FROM merged_totals('stepCount', timestamp '2025-03-25' AT TIME ZONE 'Europe/Berlin', "
                            + "timestamp '2025-04-03 12:00' AT TIME ZONE 'Europe/Berlin', 'Europe/Berlin', '\(step)')",
                    ])
                #expect(sql.status == 0, "\(sql.stderr)")
                let expected = try Self.statsBuckets(stats.stdout)
                let merged = Self.sqlBuckets(sql.stdout)
                #expect(!expected.isEmpty)
                #expect(
                    Self.close(expected, merged),
                    "seed \(seed), \(priority), \(step):\nstats \(expected)\nsql   \(merged)")
            }
        }
    }

    @Test func aBadStepIsNamedAndAnEmptyRangeHasNoRows() throws {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        let name = String(conninfo.split(separator: "=").last ?? "")
        let imported = try WearhouseRunner.run(
            ["import-samples", "--store", server.url(database: name), "-"], stdin: Self.lines(seed: 7, count: 20))
        #expect(imported.status == 0, "\(imported.stderr)")
        let bad = try WearhouseRunner.runTool(
            "/usr/bin/psql",
            [
                conninfo, "-X", "-q", "-A", "-t", "-c",
                "SELECT * FROM merged_totals('stepCount', now() - interval '1 day', now(), 'UTC', 'fortnight')",
            ])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("merged_totals: p_step must be 'day' or 'week', not fortnight"), "\(bad.stderr)")
        let empty = try server.psql(
            "SELECT count(*) FROM merged_totals('stepCount', '2025-03-26', '2025-03-26', 'UTC')", database: name)
        #expect(empty == "0\n")
    }
}
