import Foundation
import Health
import HealthBus
import SQLiteStore
import TestSupport
import Testing

/// The owner's priority methods over the real service: root (the owner here) sets and reads what
/// `wearhouse priority` shows and the apps' statistics follow; another user is refused.
extension MultiUserTests {
    @Test func theOwnerSetsThePriorityOverTheBusAndOtherUsersAreRefused() async throws {
        let service = try await RunningService.start()
        defer { service.stop() }
        let alice = MultiUser.users[0]
        let set = try service.busctl(
            "SetPriority", ["sass", "stepCount", "2", "com.example.watch", "wearhouse[footpod]", "exclude"])
        #expect(set.status == 0 && set.stdout.isEmpty, "\(set.stderr)")
        #expect(try service.busctl("SetPriority", ["sass", "default", "1", "phone[]", "gapFill"]).status == 0)
        let listed = try service.busctl("Priorities")
        #expect(
            listed.stdout
                == "a(sass) 2 \"default\" 1 \"phone[]\" \"gapFill\" \"stepCount\" 2 \"com.example.watch\" "
                + "\"wearhouse[footpod]\" \"exclude\"\n", "\(listed.stderr)")
        let shown = try service.wearhouse(["priority", "show", "--json"]).stdout
        #expect(shown.contains("\"stepCount\":{\"order\":[\"com.example.watch\",\"wearhouse[footpod]\"]"), "\(shown)")

        for (member, arguments) in [
            ("Priorities", [String]()), ("SetPriority", ["sass", "stepCount", "1", "x", "gapFill"]),
            ("ResetPriority", ["s", "stepCount"]),
        ] {
            let refused = try service.busctl(member, arguments, as: alice)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("is for the store's owner"), "\(member): \(refused.stderr)")
        }
        // Bad lists are refused with what is wrong, and the stored ones stay.
        for (arguments, message) in [
            (["sass", "heartRate", "1", "x", "gapFill"], "heartRate is discrete"),
            (["sass", "stepCount", "1", "a,b", "gapFill"], "entry 1 holds a comma"),
            (["sass", "stepCount", "1", "a[b", "gapFill"], "a device goes in brackets"),
            (["sass", "stepCount", "2", "a", "a", "gapFill"], "entry 2 (a) is listed twice"),
            (["sass", "stepCount", "0", "exclude"], "an empty list that excludes"),
            (["sass", "stepCount", "1", "a", "drop"], "unranked must be gapFill or exclude"),
            (["sass", "steps", "1", "a", "gapFill"], "unknown type 'steps'"),
        ] {
            let refused = try service.busctl("SetPriority", arguments)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        #expect(try service.busctl("ResetPriority", ["s", "stepCount"]).status == 0)
        #expect(try service.busctl("Priorities").stdout == "a(sass) 1 \"default\" 1 \"phone[]\" \"gapFill\"\n")
    }
}
