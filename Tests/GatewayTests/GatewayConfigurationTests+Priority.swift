import Gateway
import Health
import Testing

/// `[priority]`: the source priorities a fleet's gateways set in their shared store.
@Suite struct GatewayPriorityConfigurationTests {
    @Test func listsAndPoliciesByTypeAndTheDefault() throws {
        let configuration = try GatewayConfiguration(
            parsing: """
                [priority]
                stepCount = com.example.watch, wearhouse[F0:13:C3:7A:2B:01]
                stepCount.unranked = exclude
                default = wearhouse, phone[]
                """, file: "test.conf")
        #expect(
            configuration.priorities == [
                "stepCount": SourcePriority(
                    order: [
                        Provenance(source: "com.example.watch", device: Provenance.anyDevice),
                        Provenance(source: "wearhouse", device: "F0:13:C3:7A:2B:01"),
                    ], unranked: .exclude),
                defaultPriorityKey: SourcePriority(
                    order: [
                        Provenance(source: "wearhouse", device: Provenance.anyDevice),
                        Provenance(source: "phone", device: nil),
                    ]),
            ])
        // The whole configuration as text parses back to the same, priorities included.
        #expect(try GatewayConfiguration(parsing: configuration.iniText, file: "again") == configuration)
        let overridden = try configuration.applying(overrides: ["priority.stepCount.unranked": "gapFill"])
        #expect(overridden.priorities["stepCount"]?.unranked == .gapFill)
    }

    @Test(arguments: [
        (
            "heartRate = wearhouse", "test.conf:2",
            "unknown key 'heartRate' in [priority]: expected default or a cumulative"
        ),
        ("steps = wearhouse", "test.conf:2", "unknown key 'steps' in [priority]"),
        ("stepCount = a,,b", "test.conf:2", "invalid stepCount in [priority]: entry 2 is empty"),
        ("stepCount.unranked = drop", "test.conf:2", "expected gapFill or exclude"),
        ("default.unranked = exclude", "test.conf:2", "default in [priority]: an empty list that excludes"),
    ])
    func aListThatCannotBeReadNamesTheLineAndTheKey(_ line: String, _ location: String, _ message: String) {
        do {
            _ = try GatewayConfiguration(parsing: "[priority]\n" + line + "\n", file: "test.conf")
            Issue.record("\(line) was accepted")
        } catch {
            #expect(error.location == location, "\(error)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
