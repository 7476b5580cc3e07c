import Foundation
import Testing

/// `wearhouse decode` of a glucose meter's values through the real binary (`docs/gatt-glucose.md`).
@Suite struct GlucoseDecodeCommandTests {
    @Test func decodesAGlucoseMeasurementAsJSON() throws {
        // Nordic's GlucoseMeasurementDataCallbackTest vector.
        let result = try WearhouseRunner.run(["decode", "0x2A18", "--json", "1b0100e307021b0b0a1efbff1e00120501"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["characteristic"] as? String == "glucose-measurement")
        #expect(json["sequence_number"] as? Int == 1)
        #expect(json["base_time"] as? String == "2019-02-27T11:10:30")
        #expect(json["time_offset"] as? Int == -5)
        #expect(json["units"] as? String == "kg/L")
        #expect(json["type"] as? String == "capillary_plasma")
        #expect(json["sample_location"] as? String == "finger")
        #expect(json["context_follows"] as? Bool == true)
    }

    @Test func aTruncatedGlucoseMeasurementNamesItsField() throws {
        let result = try WearhouseRunner.run([
            "decode", "glucose-measurement", "--json", "1b0000e207041a0b091e1e00120501",
        ])
        #expect(result.status == 65)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["field"] as? String == "sensor_status")
        #expect(json["offset"] as? Int == 15)
    }

    @Test func decodesAControlPointResponse() throws {
        let result = try WearhouseRunner.run(["decode", "record-access-control-point", "--json", "06000106"])
        #expect(result.status == 0)
        let operand = try #require(try WearhouseRunner.json(result.stdout)["operand"] as? [String: Any])
        #expect(operand["response_code"] as? String == "no_records_found")
    }
}
