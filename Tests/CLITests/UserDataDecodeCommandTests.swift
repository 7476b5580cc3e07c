import Foundation
import Testing

/// `wearhouse decode` of Current Time and User Data Service values through the real binary
/// (`docs/gatt-health-devices.md`).
@Suite struct UserDataDecodeCommandTests {
    @Test func decodesCurrentTimeAndAUserControlPointResponse() throws {
        // 2026-12-02 07:30:05, Wednesday, 128/256 s, manual update + time zone + DST changed.
        let time = try WearhouseRunner.run(["decode", "current-time", "--json", "ea070c02071e0503800d"])
        #expect(time.status == 0)
        #expect(time.stderr.isEmpty)
        let json = try WearhouseRunner.json(time.stdout)
        #expect(json["characteristic"] as? String == "current-time")
        #expect(json["date_time"] as? String == "2026-12-02T07:30:05")
        #expect(json["day_of_week"] as? String == "wednesday")
        #expect(json["fraction"] as? Double == 0.5)
        let reason = try #require(json["adjust_reason"] as? [String: Any])
        #expect(reason["set"] as? [String] == ["manual_time_update", "change_of_time_zone", "change_of_dst"])

        // Response code to register new user: success, new user index 3.
        let response = try WearhouseRunner.run(["decode", "user-control-point", "--json", "20010103"])
        #expect(response.status == 0)
        let parameter = try #require(try WearhouseRunner.json(response.stdout)["parameter"] as? [String: Any])
        #expect(parameter["request_op_code"] as? String == "register_new_user")
        #expect(parameter["response_value"] as? String == "success")
        #expect(parameter["user_index"] as? Int == 3)

        // Without the new index: truncated, exit 65.
        let truncated = try WearhouseRunner.run(["decode", "0x2A9F", "--json", "200101"])
        #expect(truncated.status == 65)
        #expect(try WearhouseRunner.json(truncated.stdout)["field"] as? String == "user_index")
    }
}
