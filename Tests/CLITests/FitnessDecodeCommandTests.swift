import Foundation
import Testing

/// `wearhouse decode` of the fitness-machine characteristics (`docs/gatt-fitness-machines.md`).
@Suite struct FitnessDecodeCommandTests {
    @Test func decodesTreadmillData() throws {
        let result = try WearhouseRunner.run([
            "decode", "2acd", "--json", "8c04e803d204001900 0e00570058020a5802",
        ])
        #expect(result.status == 0)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["characteristic"] as? String == "treadmill-data")
        #expect(json["instantaneous_speed"] as? Double == 10.0)
        #expect(json["total_distance"] as? Int == 1234)
        #expect(json["inclination"] as? Double == 2.5)
        #expect(json["total_energy"] as? Int == 87)
        #expect(json["elapsed_time"] as? Int == 600)
        #expect(json["more_data"] as? Bool == false)
    }

    @Test func truncatedTreadmillDataExits65() throws {
        let result = try WearhouseRunner.run(["decode", "treadmill-data", "--json", "0500d204"])
        #expect(result.status == 65)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["error"] as? String == "truncated")
        #expect(json["field"] as? String == "total_distance")
        #expect(json["offset"] as? Int == 2)
    }

    @Test func decodesCyclingPower() throws {
        let result = try WearhouseRunner.run(["decode", "cycling-power-measurement", "--json", "2000fa002c010004"])
        #expect(result.status == 0)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["instantaneous_power"] as? Int == 250)
        #expect(json["cumulative_crank_revolutions"] as? Int == 300)
    }
}
