import GATT
import Support
import TestSupport
import Testing

/// ``BluetoothUUID``: 16/32/128-bit equivalence, parsing, canonical text (`docs/gatt-policy.md`, "UUIDs").
@Suite struct BluetoothUUIDTests {
    static let heartRateForms = [
        "2a37", "2A37", "0x2a37", "0X2A37", "0x2A37", "00002a37", "00002A37", "0x00002a37",
        "00002a37-0000-1000-8000-00805f9b34fb", "00002A37-0000-1000-8000-00805F9B34FB",
        "00002a37-0000-1000-8000-00805F9b34Fb", "00002a3700001000800000805f9b34fb",
        "00002A3700001000800000805F9B34FB",
    ]

    @Test(arguments: heartRateForms)
    func everyFormOfTheSameUUIDIsEqual(_ text: String) throws {
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid == BluetoothUUID(UInt16(0x2A37)))
        #expect(uuid == BluetoothUUID(UInt32(0x2A37)))
        #expect(uuid == .heartRateMeasurement)
        #expect(uuid.hashValue == BluetoothUUID(UInt16(0x2A37)).hashValue)
        #expect(uuid.description == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortDescription == "2a37")
        #expect(uuid.shortValue == 0x2A37)
        #expect(uuid.value32 == 0x2A37)
    }

    @Test func sixteenAndOneHundredTwentyEightBitFormsHashTogether() throws {
        let parsed = try Self.heartRateForms.map { try #require(BluetoothUUID($0)) }
        #expect(Set(parsed).count == 1)
        var names: [BluetoothUUID: String] = [BluetoothUUID(UInt16(0x2A37)): "hrm"]
        let fromBlueZ = try #require(BluetoothUUID("00002a37-0000-1000-8000-00805f9b34fb"))
        #expect(names[fromBlueZ] == "hrm")
        names[fromBlueZ] = "heart rate"
        #expect(names.count == 1)
        #expect(names[BluetoothUUID(UInt16(0x2A37))] == "heart rate")
        let services: Set<BluetoothUUID> = [.heartRateService, .batteryService]
        #expect(services.contains(try #require(BluetoothUUID("0000180F-0000-1000-8000-00805F9B34FB"))))
        #expect(!services.contains(.heartRateMeasurement))
    }

    @Test func thirtyTwoBitUUIDs() throws {
        let uuid = BluetoothUUID(UInt32(0x1234_5678))
        #expect(uuid.description == "12345678-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortDescription == "12345678")
        #expect(uuid.value32 == 0x1234_5678)
        #expect(uuid.shortValue == nil)
        #expect(BluetoothUUID("12345678") == uuid)
        #expect(BluetoothUUID("0x12345678") == uuid)
        #expect(BluetoothUUID("12345678-0000-1000-8000-00805F9B34FB") == uuid)
        let small = BluetoothUUID(UInt32(0x0001_0000))
        #expect(small.shortDescription == "00010000")
        #expect(small.shortValue == nil)
        // A 32-bit value that fits in 16 bits is the 16-bit UUID.
        #expect(BluetoothUUID(UInt32(0xFEE0)) == BluetoothUUID(UInt16(0xFEE0)))
        #expect(BluetoothUUID(UInt32(0xFEE0)).shortDescription == "fee0")
    }

    @Test func shortDescriptionKeepsLeadingZeros() {
        #expect(BluetoothUUID(UInt16(0x0001)).shortDescription == "0001")
        #expect(BluetoothUUID(UInt16(0x0001)).description == "00000001-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID(UInt16(0)).shortDescription == "0000")
        #expect(BluetoothUUID(UInt16(0xFFFF)).shortDescription == "ffff")
    }

    @Test func vendorUUIDsAreNeverShortened() throws {
        let infiniTime = try #require(BluetoothUUID("00030001-78FC-48FE-8E23-433B3A1942D0"))
        #expect(infiniTime == .infiniTimeStepCount)
        #expect(infiniTime.description == "00030001-78fc-48fe-8e23-433b3a1942d0")
        #expect(infiniTime.shortDescription == infiniTime.description)
        #expect(infiniTime.shortValue == nil && infiniTime.value32 == nil)
        // Huami's steps characteristic: not on the Bluetooth Base UUID either.
        let huami = try #require(BluetoothUUID("00000007-0000-3512-2118-0009af100700"))
        #expect(huami.shortDescription == "00000007-0000-3512-2118-0009af100700")
        // One bit away from the Base UUID, in either half, is a different (vendor) UUID.
        let nearBase = try #require(BluetoothUUID("00002a37-0000-1001-8000-00805f9b34fb"))
        #expect(nearBase != .heartRateMeasurement)
        #expect(nearBase.shortValue == nil)
        #expect(nearBase.shortDescription == "00002a37-0000-1001-8000-00805f9b34fb")
        let nearLow = try #require(BluetoothUUID("00002a37-0000-1000-8000-00805f9b34fc"))
        #expect(nearLow.shortValue == nil)
    }

    @Test func halves() {
        let uuid = BluetoothUUID(UInt16(0x180D))
        #expect(uuid.high == 0x0000_180D_0000_1000)
        #expect(uuid.low == 0x8000_0080_5F9B_34FB)
        #expect(BluetoothUUID(high: 0x0000_180D_0000_1000, low: 0x8000_0080_5F9B_34FB) == .heartRateService)
    }

    static let invalid = [
        "", "2", "2a3", "2a377", "2a37a7", "0x", "0x2a3", "0x0x2a37", "2a3g", "g2a3", "+2a3", "-2a3", " 2a37",
        "2a37 ", "2a 7", "xyz1", "0000180g", "0000180d-0000-1000-8000-00805f9b34f",  // 35
        "0000180d-0000-1000-8000-00805f9b34fbb",  // 37
        "0000180d-0000-1000-8000-00805f9b34fg",  // non-hex
        "0000180d00001000800000805f9b34fbaaaa",  // 36 characters without dashes
        "0000180d-00001000-8000-00805f9b34fb-",  // dashes in the wrong places
        "0000180-d0000-1000-8000-00805f9b34fb", "0000180d:0000:1000:8000:00805f9b34fb",
        "0000180d-0000-1000-8000-00805f9b",  // 32 characters, with dashes
        "0000180d00001000800000805f9b34f",  // 31 digits
        "０００２a37",  // full-width digits
        "{0000180d-0000-1000-8000-00805f9b34fb}",
    ]

    @Test(arguments: invalid)
    func rejects(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func parsesSubstrings() {
        let text = "uuid=00002a19-0000-1000-8000-00805f9b34fb;"
        let slice = text.dropFirst(5).dropLast()
        #expect(BluetoothUUID(slice) == .batteryLevel)
    }

    @Test func descriptionRoundTripsForRandomUUIDs() {
        var rng = SplitMix64(seed: 0x0055_1D00)
        for _ in 0..<500 {
            let uuid = BluetoothUUID(high: rng.next(), low: rng.next())
            let text = uuid.description
            #expect(text.count == 36)
            #expect(text == text.lowercased())
            #expect(BluetoothUUID(text) == uuid)
            #expect(BluetoothUUID(text.uppercased()) == uuid)
            #expect(BluetoothUUID(String(text.filter { $0 != "-" })) == uuid)
            #expect(BluetoothUUID(uuid.shortDescription) == uuid)
        }
    }

    @Test func ordering() {
        let sorted = [BluetoothUUID.heartRateMeasurement, .batteryLevel, .infiniTimeStepCount, .heartRateService]
            .sorted()
        #expect(sorted == [.heartRateService, .batteryLevel, .heartRateMeasurement, .infiniTimeStepCount])
        #expect(BluetoothUUID(high: 1, low: 0) > BluetoothUUID(high: 0, low: .max))
    }

    /// The assigned numbers of `docs/gatt-policy.md`, "UUIDs", in the form BlueZ shows.
    static let assigned: [(BluetoothUUID, String)] = [
        (.heartRateService, "0000180d-0000-1000-8000-00805f9b34fb"),
        (.heartRateMeasurement, "00002a37-0000-1000-8000-00805f9b34fb"),
        (.bodySensorLocation, "00002a38-0000-1000-8000-00805f9b34fb"),
        (.heartRateControlPoint, "00002a39-0000-1000-8000-00805f9b34fb"),
        (.runningSpeedAndCadenceService, "00001814-0000-1000-8000-00805f9b34fb"),
        (.rscMeasurement, "00002a53-0000-1000-8000-00805f9b34fb"),
        (.rscFeature, "00002a54-0000-1000-8000-00805f9b34fb"),
        (.sensorLocation, "00002a5d-0000-1000-8000-00805f9b34fb"),
        (.scControlPoint, "00002a55-0000-1000-8000-00805f9b34fb"),
        (.cyclingSpeedAndCadenceService, "00001816-0000-1000-8000-00805f9b34fb"),
        (.cscMeasurement, "00002a5b-0000-1000-8000-00805f9b34fb"),
        (.cscFeature, "00002a5c-0000-1000-8000-00805f9b34fb"),
        (.physicalActivityMonitorService, "0000183e-0000-1000-8000-00805f9b34fb"),
        (.pamsFeatures, "00002b3b-0000-1000-8000-00805f9b34fb"),
        (.stepCounterActivitySummaryData, "00002b40-0000-1000-8000-00805f9b34fb"),
        (.deviceInformationService, "0000180a-0000-1000-8000-00805f9b34fb"),
        (.manufacturerNameString, "00002a29-0000-1000-8000-00805f9b34fb"),
        (.modelNumberString, "00002a24-0000-1000-8000-00805f9b34fb"),
        (.serialNumberString, "00002a25-0000-1000-8000-00805f9b34fb"),
        (.hardwareRevisionString, "00002a27-0000-1000-8000-00805f9b34fb"),
        (.firmwareRevisionString, "00002a26-0000-1000-8000-00805f9b34fb"),
        (.softwareRevisionString, "00002a28-0000-1000-8000-00805f9b34fb"),
        (.systemID, "00002a23-0000-1000-8000-00805f9b34fb"),
        (.pnpID, "00002a50-0000-1000-8000-00805f9b34fb"),
        (.batteryService, "0000180f-0000-1000-8000-00805f9b34fb"),
        (.batteryLevel, "00002a19-0000-1000-8000-00805f9b34fb"),
        (.clientCharacteristicConfiguration, "00002902-0000-1000-8000-00805f9b34fb"),
        (.infiniTimeMotionService, "00030000-78fc-48fe-8e23-433b3a1942d0"),
        (.infiniTimeStepCount, "00030001-78fc-48fe-8e23-433b3a1942d0"),
    ]

    @Test(arguments: assigned)
    func assignedNumbers(_ uuid: BluetoothUUID, _ text: String) {
        #expect(uuid.description == text)
        #expect(BluetoothUUID(text) == uuid)
    }
}
