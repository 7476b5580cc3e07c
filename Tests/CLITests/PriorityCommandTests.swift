import Foundation
import Testing

/// `wearhouse priority` through the real binary: the person's list changes what `stats` adds up, as the merge says
/// (`docs/store-semantics.md`, "The merge of cumulative types").
@Suite struct PriorityCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    /// The footpod counted 1,000 steps in 10:00-10:10, the watch 600 in 10:05-10:15, the phone 800 in
    /// 10:13:20-10:20, each written after the one before (unranked, the later write wins an overlap).
    static let writes = [
        #"{"type":"stepCount","start":"2025-03-30T10:00:00Z","end":"2025-03-30T10:10:00Z","value":1000,"source":"wearhouse","device":"footpod"}"#,
        #"{"type":"stepCount","start":"2025-03-30T10:05:00Z","end":"2025-03-30T10:15:00Z","value":600,"source":"com.example.watch","device":"watch"}"#,
        #"{"type":"stepCount","start":"2025-03-30T10:13:20Z","end":"2025-03-30T10:20:00Z","value":800,"source":"com.example.phone"}"#,
    ]

    func total() throws -> Double? {
        let result = try WearhouseRunner.run([
            "stats", "--store", store, "--type", "stepCount", "--interval", "1d", "--from", "2025-03-30", "--to",
            "2025-03-31", "--time-zone", "UTC", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        return try WearhouseRunner.json(result.stdout)["sum"] as? Double
    }

    func priority(_ arguments: [String]) throws -> WearhouseRunner.Result {
        try WearhouseRunner.run(["priority"] + arguments + ["--store", store])
    }

    @Test func theListChangesTheDailyTotalAsTheMergeSays() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for line in Self.writes {
            let imported = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n")
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        #expect(try priority(["show"]).stdout.hasPrefix("No priorities are set"))
        // Footpod 10:00-10:05 (500), watch 10:05-10:13:20 (500), phone 10:13:20-10:20 (800).
        #expect(try total() == 1_800)

        // The issue's own example: the watch first, then the gateway's every device; the phone fills the gaps.
        let set = try priority(["set", "stepCount", "com.example.watch,wearhouse"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "stepCount: com.example.watch, wearhouse\n")
        // Watch 10:05-10:15 (600), footpod 10:00-10:05 (500), phone 10:15-10:20 (600).
        #expect(try total() == 1_700)
        #expect(try priority(["set", "stepCount", "com.example.watch,wearhouse", "--unranked", "exclude"]).status == 0)
        #expect(try total() == 1_100)

        // One device of a source, by its key: the footpod's whole 1,000; then the watch 10:10-10:13:20 (200) and the
        // phone, written later, 10:13:20-10:20 (800).
        #expect(try priority(["set", "stepCount", "wearhouse[footpod]"]).status == 0)
        #expect(try total() == 2_000)
        // The phone's samples have no device: `SOURCE[]` names them.
        #expect(try priority(["set", "default", "com.example.phone[]", "--unranked", "exclude"]).status == 0)
        let show = try priority(["show"])
        #expect(
            show.stdout == """
                TYPE       PRIORITY (HIGHEST FIRST)  UNRANKED
                default    com.example.phone[]       exclude
                stepCount  wearhouse[footpod]        gapFill

                """, "\(show.stdout)")
        let json = try WearhouseRunner.json(try priority(["show", "--json"]).stdout)
        #expect((json["default"] as? [String: Any])?["order"] as? [String] == ["com.example.phone[]"])
        #expect((json["stepCount"] as? [String: Any])?["unranked"] as? String == "gapFill")
        // stepCount's own list wins over the default until it is reset.
        #expect(try total() == 2_000)
        #expect(try priority(["reset", "stepCount"]).status == 0)
        #expect(try total() == 800)
        #expect(try priority(["reset", "default"]).status == 0)
        #expect(try total() == 1_800)
        #expect(try priority(["show"]).stdout.hasPrefix("No priorities are set"))
    }

    @Test func sourcesListsWhoWroteEachTypeWithItsRank() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let imported = try WearhouseRunner.run(
            ["import-samples", "--store", store, "-"], stdin: Self.writes.joined(separator: "\n") + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try priority(["set", "stepCount", "com.example.watch", "--unranked", "exclude"]).status == 0)
        let listed = try WearhouseRunner.run(["sources", "--store", store, "--type", "stepCount,heartRate"])
        #expect(
            listed.stdout == """
                TYPE       SOURCE[DEVICE]            DEVICE NAME  COUNT  FIRST                     LAST                      RANK
                stepCount  com.example.phone                      1      2025-03-30T10:13:20.000Z  2025-03-30T10:20:00.000Z  excluded
                stepCount  com.example.watch[watch]               1      2025-03-30T10:05:00.000Z  2025-03-30T10:15:00.000Z  1
                stepCount  wearhouse[footpod]                     1      2025-03-30T10:00:00.000Z  2025-03-30T10:10:00.000Z  excluded

                """, "\(listed.stdout)")
        let json = try WearhouseRunner.run(
            ["sources", "--store", store, "--type", "stepCount", "--json", "--time-zone", "Europe/Berlin"])
        let first = try WearhouseRunner.json(try #require(json.stdout.split(separator: "\n").first))
        #expect(first["first"] as? String == "2025-03-30T12:13:20.000+02:00")
        #expect(first["device"] is NSNull)
        #expect(first["rank"] as? String == "excluded")
    }

    @Test(arguments: [
        (["set", "heartRate", "wearhouse"], "heartRate is discrete: every source of it counts"),
        (["set", "stepCount", "a,,b"], "<sources>: entry 2 is empty"),
        (["set", "stepCount", "wearhouse[footpod"], "a device goes in brackets at the end"),
        (["set", "stepCount", "a,b,a"], "entry 3 'a' is listed twice"),
        (["set", "stepCount", "a[*]"], "the device may not be '*'"),
        (["set", "steps", "a"], "unknown type 'steps'"),
        (["set", "stepCount", "a", "--unranked", "drop"], "--unranked must be gapFill or exclude"),
    ])
    func aListThatCannotBeReadIsAUsageErrorNamingWhatIsWrong(_ arguments: [String], _ message: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try priority(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}
