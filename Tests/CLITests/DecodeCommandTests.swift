import Foundation
import Testing

/// `wearhouse decode` through the real binary: stdout, stderr and the exit code.
@Suite struct DecodeCommandTests {
    @Test func decodesHeartRateAsText() throws {
        let result = try WearhouseRunner.run(["decode", "heart-rate-measurement", "163c1104"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasPrefix("heart-rate-measurement (2a37)\n"))
        #expect(result.stdout.contains("heart_rate                 60 count/min\n"))
        #expect(result.stdout.contains("sensor_contact             detected\n"))
        #expect(result.stdout.contains("rr_intervals               [1041] 1/1024 s\n"))
    }

    @Test func decodesHeartRateAsExactJSON() throws {
        let result = try WearhouseRunner.run(["decode", "2a37", "--json", "16 3c f5 03"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                {"characteristic":"heart-rate-measurement","uuid":"00002a37-0000-1000-8000-00805f9b34fb",\
                "flags":22,"heart_rate":60,"heart_rate_format":"uint8","sensor_contact":"detected",\
                "sensor_contact_supported":true,"sensor_contact_detected":true,"energy_expended":null,\
                "energy_expended_saturated":false,"rr_intervals":[1013],"rr_intervals_ms":[989.2578125],\
                "reserved_flags":0}

                """)
    }

    @Test(arguments: [
        "2a37", "0x2A37", "00002A37-0000-1000-8000-00805F9B34FB", "heart-rate-measurement", "heart_rate_measurement",
    ])
    func acceptsEveryCharacteristicSpelling(_ name: String) throws {
        let result = try WearhouseRunner.run(["decode", name, "--json", "0044"])
        #expect(result.status == 0)
        #expect(try WearhouseRunner.json(result.stdout)["heart_rate"] as? Int == 68)
    }

    @Test func decodesRSCDistanceInMetres() throws {
        let result = try WearhouseRunner.run(["decode", "rsc-measurement", "--json", "02000550ffff0001"])
        let json = try WearhouseRunner.json(result.stdout)
        #expect(result.status == 0)
        #expect(json["instantaneous_speed"] as? Double == 5.0)
        #expect(json["instantaneous_cadence"] as? Int == 80)
        #expect(json["total_distance"] as? Double == 1_684_275.1)
        #expect(json["instantaneous_stride_length"] is NSNull)
    }

    @Test func truncatedValueExits65NamingFieldAndOffset() throws {
        let result = try WearhouseRunner.run(["decode", "2a37", "--json", "1e3c01"])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(result.stderr.contains("energy_expended"))
        #expect(result.stderr.contains("byte offset 2"))
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["error"] as? String == "truncated")
        #expect(json["field"] as? String == "energy_expended")
        #expect(json["offset"] as? Int == 2)
    }

    @Test func oddRRByteIsMalformed() throws {
        let result = try WearhouseRunner.run(["decode", "2a37", "--json", "103c000401"])
        #expect(result.status == 65)
        let json = try WearhouseRunner.json(result.stdout)
        #expect(json["error"] as? String == "malformed")
        #expect(json["offset"] as? Int == 4)
    }

    @Test func emptyValueIsEmpty() throws {
        let result = try WearhouseRunner.run(["decode", "2a37", "--json", ""])
        #expect(result.status == 65)
        #expect(try WearhouseRunner.json(result.stdout)["error"] as? String == "empty")
    }

    @Test func batteryAboveHundredIsOutOfRange() throws {
        let result = try WearhouseRunner.run(["decode", "battery-level", "--json", "65"])
        #expect(result.status == 65)
        #expect(try WearhouseRunner.json(result.stdout)["error"] as? String == "out_of_range")
    }

    @Test func badHexExits65WithPosition() throws {
        let result = try WearhouseRunner.run(["decode", "2a37", "16zz"])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "Error: invalid hex at character 3: 'z' is not a hex digit\n")
    }

    @Test func unknownCharacteristicIsAUsageError() throws {
        let result = try WearhouseRunner.run(["decode", "2a99", "00"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: unknown characteristic '2a99'\n"))
        #expect(result.stderr.contains("heart-rate-measurement (2a37)"))
    }

    @Test func unknownOptionIsAUsageErrorWithUsage() throws {
        let result = try WearhouseRunner.run(["decode", "--bogus", "2a37", "00"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: unknown option '--bogus'\nUsage: wearhouse decode "))
        #expect(result.stderr.contains("See 'wearhouse help decode' for more information."))
    }

    @Test func readsOneValuePerLineFromStandardInput() throws {
        let input = "# Polar H10\n10 39 c9 03\n\n00 37\n17\n0044\n"
        let result = try WearhouseRunner.run(["decode", "2a37", "--json", "-"], stdin: input)
        #expect(result.status == 65)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(try WearhouseRunner.json(lines[0])["heart_rate"] as? Int == 57)
        #expect(try WearhouseRunner.json(lines[1])["rr_intervals"] as? [Int] == [])
        #expect(try WearhouseRunner.json(lines[2])["error"] as? String == "truncated")
        #expect(try WearhouseRunner.json(lines[3])["heart_rate"] as? Int == 68)
        #expect(result.stderr.hasPrefix("Error: line 5: "))
    }

    @Test func cscDeltaWithPreviousHandlesRollover() throws {
        // wheel 0xFFFFFFFF -> 1 (2 revolutions), event time 0xFF00 -> 0x0100 (512/1024 s)
        let result = try WearhouseRunner.run([
            "decode", "csc-measurement", "--json", "01010000000001", "--previous", "01ffffffff00ff",
        ])
        #expect(result.status == 0)
        let delta = try #require(try WearhouseRunner.json(result.stdout)["delta"] as? [String: Any])
        #expect(delta["wheel_revolutions"] as? Int == 2)
        #expect(delta["wheel_event_time"] as? Int == 512)
        #expect(delta["wheel_revolutions_per_second"] as? Double == 4.0)
    }
}

/// Help, version and usage errors of the `wearhouse` command itself.
@Suite struct CommandLineConventionTests {
    @Test func helpListsCommands() throws {
        let result = try WearhouseRunner.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("OVERVIEW: "))
        #expect(result.stdout.contains("\n  decode "))
    }

    @Test(arguments: [["help", "decode"], ["decode", "--help"], ["decode", "-h"]])
    func commandHelp(_ arguments: [String]) throws {
        let result = try WearhouseRunner.run(arguments)
        #expect(result.status == 0)
        #expect(
            result.stdout.hasPrefix("OVERVIEW: Decode a characteristic value given as hex.\n\nUSAGE: wearhouse decode ")
        )
        #expect(result.stdout.contains("OPTIONS:\n"))
    }

    @Test func noArgumentsIsAUsageError() throws {
        let result = try WearhouseRunner.run([])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("OVERVIEW: "))
    }

    @Test func unknownCommand() throws {
        let result = try WearhouseRunner.run(["frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr == "Error: unknown command 'frobnicate'\nSee 'wearhouse --help' for the commands.\n")
    }

    @Test func version() throws {
        let result = try WearhouseRunner.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("wearhouse "))
        #expect(result.stdout.contains("SQLite 3."))
    }
}
