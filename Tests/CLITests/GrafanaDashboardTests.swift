import Foundation
import TestSupport
import Testing

/// contrib/grafana/wearhouse.json: every panel's query, with Grafana's macros expanded as Grafana expands them, runs
/// under a role that may only SELECT and answers what `wearhouse stats` answers.
@Suite struct GrafanaDashboardTests {
    static let dashboard = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib/grafana/wearhouse.json")

    /// Each panel's title and SQL.
    static func queries() throws -> [(title: String, sql: String)] {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: dashboard))
        let panels = try #require((object as? [String: Any])?["panels"] as? [[String: Any]])
        var queries: [(title: String, sql: String)] = []
        for panel in panels {
            let title = try #require(panel["title"] as? String)
            let targets = try #require(panel["targets"] as? [[String: Any]])
            for target in targets {
                let sql = try #require(target["rawSql"] as? String, "\(title)")
                queries.append((title, sql))
            }
        }
        return queries
    }

    /// The query as Grafana sends it for 2025-03-29T23:00Z...2025-03-31T22:00Z, an hour's interval, every
    /// subject and days in Europe/Berlin.
    static func expand(_ sql: String) -> String {
        let from = "'2025-03-29T23:00:00Z'"
        let to = "'2025-03-31T22:00:00Z'"
        return sql.replacingOccurrences(
            of: "$__timeGroupAlias(time, $__interval)",
            with: "to_timestamp(floor(extract(epoch FROM time) / 3600) * 3600) AS \"time\""
        )
        .replacingOccurrences(of: "$__timeFilter(time)", with: "time BETWEEN \(from) AND \(to)")
        .replacingOccurrences(of: "$__timeFrom()", with: from).replacingOccurrences(of: "$__timeTo()", with: to)
        .replacingOccurrences(of: "$subject", with: "'alice','bob','(nobody)'")
        .replacingOccurrences(of: "$zone", with: "Europe/Berlin")
    }

    @Test func everyPanelQueryRunsReadOnlyAndAgreesWithStats() throws {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        let name = String(conninfo.split(separator: "=").last ?? "")
        let url = server.url(database: name)
        let lines = StoreCommandTests.lines + PostgresMergedTotalsTests.lines(seed: 0x6AF, count: 200)
        let imported = try WearhouseRunner.run(["import-samples", "--store", url, "-"], stdin: lines)
        #expect(imported.status == 0, "\(imported.stderr)")
        let role = "grafana_\(name.suffix(8))"
        try server.psql("CREATE ROLE \(role) LOGIN")
        try server.psql(
            "GRANT CONNECT ON DATABASE \(name) TO \(role); GRANT USAGE ON SCHEMA public TO \(role); "
                + "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)", database: name)
        let reader = conninfo.replacingOccurrences(of: "user=wearhouse", with: "user=\(role)")
        func psql(_ sql: String) throws -> [[String]] {
            let result = try WearhouseRunner.runTool(
                "/usr/bin/psql", [reader, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            #expect(result.status == 0, "\(sql)\n\(result.stderr)")
            return result.stdout.split(separator: "\n").map {
                $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            }
        }
        let queries = try Self.queries()
        #expect(queries.count == 4)
        let stats = { (arguments: [String]) in
            let result = try WearhouseRunner.run(
                ["stats", "--from", "2025-03-30", "--to", "2025-03-31T23:00", "--time-zone", "Europe/Berlin", "--json"]
                    + arguments + ["--store", url])
            #expect(result.status == 0, "\(result.stderr)")
            return try PostgresMergedTotalsTests.statsBuckets(result.stdout)
        }
        for (title, sql) in queries {
            if sql.contains("merged_totals('stepCount'") || sql.contains("merged_totals('distanceWalkingRunning'") {
                let type = sql.contains("stepCount") ? "stepCount" : "distanceWalkingRunning"
                // time | subject | total, per subject: their sum per day is what stats gives for everybody.
                let rows = try psql(
                    "SELECT extract(epoch FROM \"time\")::bigint, value, '' FROM (\(Self.expand(sql))) AS panel")
                let panel = PostgresMergedTotalsTests.sqlBuckets(
                    rows.map { $0.joined(separator: "|") }.joined(separator: "\n"))
                let expected = try stats(["--type", type, "--interval", "1d"]).map {
                    PostgresMergedTotalsTests.Bucket(start: $0.start, sum: $0.sum, sources: [])
                }
                #expect(!expected.isEmpty, "\(title)")
                #expect(PostgresMergedTotalsTests.close(panel, expected), "\(title): \(panel) vs \(expected)")
            } else if sql.contains("'heartRate'") {
                let rows = try psql(
                    "SELECT extract(epoch FROM \"time\")::bigint, \"min\", \"average\", \"max\" "
                        + "FROM (\(Self.expand(sql))) AS panel")
                let hourly = try WearhouseRunner.run([
                    "stats", "--type", "heartRate", "--interval", "1h", "--from", "2025-03-30", "--to",
                    "2025-03-31T23:00", "--time-zone", "Europe/Berlin", "--statistic", "min,avg,max", "--json",
                    "--store", url,
                ])
                let expected = try PostgresMergedTotalsTests.statsLines(hourly.stdout).compactMap {
                    start, fields -> [String]? in
                    guard let min = fields["min"] as? Double, let avg = fields["avg"] as? Double,
                        let max = fields["max"] as? Double
                    else { return nil }
                    return ["\(start)"] + [min, avg, max].map { "\(Int($0))" }
                }
                #expect(expected.count == 2, "\(hourly.stdout)")
                #expect(rows == expected, "\(title)")
            } else {
                // The sensors table: no sensor was enrolled, and the query runs.
                #expect(try psql(Self.expand(sql)).isEmpty, "\(title)")
            }
        }
    }
}
