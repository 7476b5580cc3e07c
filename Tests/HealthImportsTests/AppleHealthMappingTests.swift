import Health
import HealthImports
import Testing

/// The mapping of an Apple Health export's names and texts (docs/apple-health-import.md), and the XML pull reader.
@Suite struct AppleHealthMappingTests {
    @Test func typeIdentifiersLoseTheirPrefix() {
        #expect(AppleHealthMapping.type("HKQuantityTypeIdentifierStepCount") == .stepCount)
        #expect(AppleHealthMapping.type("HKQuantityTypeIdentifierVO2Max")?.identifier == "vo2Max")
        #expect(
            AppleHealthMapping.type("HKQuantityTypeIdentifierHeartRateVariabilitySDNN") == .heartRateVariabilitySDNN)
        #expect(AppleHealthMapping.type("HKCategoryTypeIdentifierSleepAnalysis") == .sleepAnalysis)
        #expect(AppleHealthMapping.type("HKCorrelationTypeIdentifierBloodPressure") == .bloodPressure)
        #expect(AppleHealthMapping.type("HKCharacteristicTypeIdentifierDateOfBirth") == .dateOfBirth)
        #expect(AppleHealthMapping.type("HKQuantityTypeIdentifierWalkingSpeed") == nil)
        #expect(AppleHealthMapping.type("stepCount") == nil)
        #expect(AppleHealthMapping.shortName("HKQuantityTypeIdentifierWalkingSpeed") == "walkingSpeed")
    }

    @Test func categoryAndCharacteristicValues() throws {
        let sleep = HealthType.sleepAnalysis
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisAsleepCore", of: sleep) == 3)
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisAsleepREM", of: sleep) == 5)
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisInBed", of: sleep) == 0)
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisAsleep", of: sleep) == 1)
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisAsleepUnspecified", of: sleep) == 1)
        #expect(AppleHealthMapping.categoryValue("4", of: sleep) == 4)
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueSleepAnalysisNapping", of: sleep) == nil)
        let stand = HealthType.appleStandHour
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueAppleStandHourIdle", of: stand) == 1)
        let bleeding = try #require(HealthTypeCatalog.type("intermenstrualBleeding"))
        #expect(AppleHealthMapping.categoryValue("HKCategoryValueNotApplicable", of: bleeding) == 0)

        #expect(try AppleHealthMapping.characteristic("HKBloodTypeABNegative", of: .bloodType) == .enumerated(6))
        #expect(try AppleHealthMapping.characteristic("HKBiologicalSexMale", of: .biologicalSex) == .enumerated(2))
        #expect(
            try AppleHealthMapping.characteristic("HKFitzpatrickSkinTypeVI", of: .fitzpatrickSkinType) == .enumerated(6)
        )
        #expect(try AppleHealthMapping.characteristic("HKBloodTypeNotSet", of: .bloodType) == nil)
        #expect(try AppleHealthMapping.characteristic("", of: .dateOfBirth) == nil)
        #expect(throws: MappingError.self) { try AppleHealthMapping.characteristic("HKBloodTypeZ", of: .bloodType) }
        #expect(throws: MappingError.self) { try AppleHealthMapping.characteristic("1985-13-01", of: .dateOfBirth) }
        #expect(
            AppleHealthMapping.activityType("HKWorkoutActivityTypeHighIntensityIntervalTraining")
                == .highIntensityIntervalTraining)
        #expect(AppleHealthMapping.activityType("HKWorkoutActivityTypeQuidditch") == nil)
        #expect(AppleHealthMapping.eventKind("HKWorkoutEventTypeMotionPaused") == .motionPaused)
    }

    @Test func metadataKeysAndValues() {
        #expect(AppleHealthMapping.metadataKey("HKMetadataKeySyncVersion") == "syncVersion")
        #expect(AppleHealthMapping.metadataKey("HKTimeZone") == "timeZone")
        #expect(AppleHealthMapping.metadataKey("HKExternalUUID") == "externalUUID")
        #expect(AppleHealthMapping.metadataKey("com.example.key") == "com.example.key")
        #expect(AppleHealthMapping.metadataKey("HKgoodness") == "HKgoodness")
        #expect(AppleHealthMapping.metadataValue("1", key: "wasUserEntered") == .bool(true))
        #expect(AppleHealthMapping.metadataValue("2", key: "wasUserEntered") == .string("2"))
        #expect(AppleHealthMapping.metadataValue("3", key: "syncVersion") == .integer(3))
        #expect(AppleHealthMapping.metadataValue("72 degF", key: "weatherTemperature") == .quantity(72, unit: "degF"))
        #expect(AppleHealthMapping.metadataValue("12 apples", key: "note") == .string("12 apples"))
        #expect(AppleHealthMapping.metadataValue("nan %", key: "note") == .string("nan %"))
    }

    @Test func timesKeepTheirOffset() throws {
        let (instant, offset) = try #require(AppleHealthMapping.time("2024-03-31 02:30:00 +0200"))
        #expect(instant == Instant(seconds: 1_711_845_000))
        #expect(offset == 7_200)
        #expect(AppleHealthMapping.time("2024-03-31 02:30:00 -0530")?.offset == -19_800)
        for bad in [
            "2024-03-31T02:30:00 +0200", "2024-03-31 02:30:00", "2024-03-31 02:30:00 +02:00",
            "2024-02-30 02:30:00 +0000",
            "2024-03-31 25:30:00 +0000", "2024-03-31 02:30:00 +2400", "", "2024-03-31 02:30:00 +0200 ",
        ] {
            #expect(AppleHealthMapping.time(bad) == nil, "\(bad)")
        }
        #expect(AppleHealthMapping.timeOfDay("10:21:54.25 PM") == 80_514_250)
        #expect(AppleHealthMapping.timeOfDay("12:00:01.5 AM") == 1_500)
        #expect(AppleHealthMapping.timeOfDay("12:00:01 PM") == 43_201_000)
        #expect(AppleHealthMapping.timeOfDay("22:21:54.25") == 80_514_250)
        #expect(AppleHealthMapping.timeOfDay("13:00:00 PM") == nil)
        #expect(AppleHealthMapping.timeOfDay("10:61:00") == nil)
        #expect(AppleHealthMapping.timeOfDay("10:21:54.") == nil)
    }

    @Test func deviceTextsBecomeDevices() {
        let watch = AppleHealthMapping.device(
            "<<HKDevice: 0x283ab7890>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, "
                + "software:9.1>")
        #expect(
            watch
                == Device(
                    name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch6,1",
                    softwareVersion: "9.1"))
        // Another export of the same device: another object address, the same device.
        #expect(
            AppleHealthMapping.device(
                "<<HKDevice: 0x1>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, "
                    + "software:9.1>") == watch)
        let strap = AppleHealthMapping.device(
            "<<HKDevice: 0x2>, name:Polar H10, 1A2B, manufacturer:Polar, localIdentifier:A0:9E:1A:00:00:01>")
        #expect(strap?.name == "Polar H10, 1A2B")
        #expect(strap?.localIdentifier == "A0:9E:1A:00:00:01")
        #expect(strap?.key == "A0:9E:1A:00:00:01")
        #expect(AppleHealthMapping.device("nothing here") == nil)
        #expect(AppleHealthMapping.device("<<HKDevice: 0x3>>") == nil)
    }

    @Test func thePullReaderGivesStartsAndEndsAndKeepsItsLimits() throws {
        func reader(_ text: String, limits: XMLPullReader.Limits = .init()) throws -> XMLPullReader {
            var bytes = Array(text.utf8)[...]
            return try XMLPullReader(name: "test.xml", limits: limits) { buffer in
                let count = min(buffer.count, bytes.count, 7)  // small reads, to cross element borders
                buffer.copyBytes(from: bytes.prefix(count))
                bytes = bytes.dropFirst(count)
                return count
            }
        }
        let xml = try reader("<?xml version=\"1.0\"?>\n<a x=\"1\" y=\"&lt;2&gt;\"><b/><!-- c --><c>text</c></a>")
        #expect(try xml.next() == .start("a", depth: 0))
        #expect(try xml.attributes() == ["x": "1", "y": "<2>"])
        #expect(try xml.next() == .start("b", depth: 1))
        #expect(try xml.next() == .end("b", depth: 1))
        #expect(try xml.next() == .start("c", depth: 1))
        #expect(try xml.next() == .end("c", depth: 1))
        #expect(try xml.next() == .end("a", depth: 0))
        #expect(try xml.next() == nil)

        let deep = try reader("<a><b><c><d/></c></b></a>", limits: .init(maximumDepth: 2))
        #expect(throws: XMLReadError.self) { while try deep.next() != nil {} }
        let many = try reader("<a p=\"1\" q=\"2\" r=\"3\"/>", limits: .init(maximumAttributes: 2))
        _ = try many.next()
        #expect(throws: XMLReadError.self) { try many.attributes() }
        let long = try reader("<a p=\"12345\"/>", limits: .init(maximumAttributeBytes: 4))
        _ = try long.next()
        #expect(throws: XMLReadError.self) { try long.attributes() }
        let broken = try reader("<a><b></a>")
        #expect(throws: XMLReadError.self) { while try broken.next() != nil {} }
        let empty = try reader("")
        #expect(throws: XMLReadError.self) { try empty.next() }
    }

    @Test func aReaderThatKeepsTextGivesEachElementsTextAtItsEnd() throws {
        func reader(_ text: String, keepsText: Bool, limits: XMLPullReader.Limits = .init()) throws -> XMLPullReader {
            var bytes = Array(text.utf8)[...]
            return try XMLPullReader(name: "test.gpx", limits: limits, keepsText: keepsText) { buffer in
                let count = min(buffer.count, bytes.count, 5)  // small reads, to split text between calls
                buffer.copyBytes(from: bytes.prefix(count))
                bytes = bytes.dropFirst(count)
                return count
            }
        }
        let text = "<p><ele> 10.5 </ele><time>2024-04-04T17:00:01Z</time><x>a &amp; b<![CDATA[ <c> ]]></x><e/></p>"
        let xml = try reader(text, keepsText: true)
        var texts: [String: String] = [:]
        while let event = try xml.next() {
            if case .end(let name, _) = event { texts[name] = try xml.text() }
        }
        #expect(texts == ["ele": " 10.5 ", "time": "2024-04-04T17:00:01Z", "x": "a & b <c> ", "e": "", "p": ""])
        // A reader that does not keep text gives none; text past the limit on a value throws at its element.
        let plain = try reader(text, keepsText: false)
        _ = try plain.next()
        _ = try plain.next()
        #expect(try plain.next() == .end("ele", depth: 1))
        #expect(try plain.text() == "")
        let long = try reader("<p><t>123456</t></p>", keepsText: true, limits: .init(maximumAttributeBytes: 4))
        _ = try long.next()
        _ = try long.next()
        _ = try long.next()
        #expect(throws: XMLReadError.self) { try long.text() }
    }
}
