import GATT
import Testing

/// ``CharacteristicCatalog``: lookup by UUID and by name, and decoding through the catalog.
@Suite struct CatalogTests {
    static let expected: [(String, UInt16?)] = [
        ("heart-rate-measurement", 0x2A37), ("body-sensor-location", 0x2A38), ("heart-rate-control-point", 0x2A39),
        ("rsc-measurement", 0x2A53), ("rsc-feature", 0x2A54), ("sensor-location", 0x2A5D),
        ("sc-control-point", 0x2A55), ("csc-measurement", 0x2A5B), ("csc-feature", 0x2A5C),
        ("battery-level", 0x2A19), ("manufacturer-name-string", 0x2A29), ("model-number-string", 0x2A24),
        ("serial-number-string", 0x2A25), ("hardware-revision-string", 0x2A27),
        ("firmware-revision-string", 0x2A26), ("software-revision-string", 0x2A28), ("system-id", 0x2A23),
        ("pnp-id", 0x2A50), ("step-counter-activity-summary-data", 0x2B40), ("infinitime-step-count", nil),
        ("date-time", 0x2A08), ("weight-measurement", 0x2A9D), ("weight-scale-feature", 0x2A9E),
        ("body-composition-measurement", 0x2A9C), ("body-composition-feature", 0x2A9B),
        ("blood-pressure-measurement", 0x2A35), ("intermediate-cuff-pressure", 0x2A36),
        ("blood-pressure-feature", 0x2A49), ("temperature-measurement", 0x2A1C), ("temperature-type", 0x2A1D),
        ("intermediate-temperature", 0x2A1E), ("measurement-interval", 0x2A21),
        ("plx-spot-check-measurement", 0x2A5E), ("plx-continuous-measurement", 0x2A5F), ("plx-features", 0x2A60),
        ("glucose-measurement", 0x2A18), ("glucose-measurement-context", 0x2A34), ("glucose-feature", 0x2A51),
        ("record-access-control-point", 0x2A52),
        ("cycling-power-measurement", 0x2A63), ("cycling-power-feature", 0x2A65), ("fitness-machine-feature", 0x2ACC),
        ("treadmill-data", 0x2ACD), ("indoor-bike-data", 0x2AD2), ("rower-data", 0x2AD1),
        ("fitness-machine-status", 0x2ADA), ("current-time", 0x2A2B), ("user-index", 0x2A9A),
        ("user-control-point", 0x2A9F),
    ]

    @Test func catalogHoldsEveryCharacteristicOfTheReference() {
        #expect(CharacteristicCatalog.all.map { $0.name } == Self.expected.map(\.0))
        #expect(CharacteristicCatalog.all.map { $0.uuid.shortValue } == Self.expected.map(\.1))
    }

    @Test(arguments: expected)
    func lookupByUUIDAndByName(_ name: String, _ short: UInt16?) throws {
        let type = try #require(CharacteristicCatalog.type(named: name))
        #expect(type.name == name)
        #expect(CharacteristicCatalog.type(for: type.uuid)?.name == name)
        #expect(CharacteristicCatalog.type(named: type.uuid.description)?.name == name)
        #expect(CharacteristicCatalog.type(named: type.uuid.description.uppercased())?.name == name)
        #expect(CharacteristicCatalog.type(named: name.uppercased())?.name == name)
        #expect(CharacteristicCatalog.type(named: name.replacingUnderscores())?.name == name)
        if let short {
            let digits = String(short, radix: 16)
            #expect(CharacteristicCatalog.type(named: digits)?.name == name)
            #expect(CharacteristicCatalog.type(named: "0x" + digits.uppercased())?.name == name)
            #expect(CharacteristicCatalog.type(named: "0000" + digits)?.name == name)
        }
    }

    @Test func namesMayLeaveOffStringAndUseSpaces() {
        #expect(CharacteristicCatalog.type(named: "manufacturer-name") == ManufacturerNameString.self)
        #expect(CharacteristicCatalog.type(named: "Serial Number") == SerialNumberString.self)
        #expect(CharacteristicCatalog.type(named: "BATTERY_LEVEL") == BatteryLevel.self)
        #expect(CharacteristicCatalog.type(named: "Heart Rate Measurement") == HeartRateMeasurement.self)
    }

    @Test(arguments: ["", "heart-rate", "2a00", "0x2A2A", "180d", "00002a37-0000-1000-8000-00805f9b34fc", "battery"])
    func unknownCharacteristics(_ text: String) {
        #expect(CharacteristicCatalog.type(named: text) == nil)
    }

    @Test func decodeThroughTheCatalog() throws {
        let heartRate = try #require(CharacteristicCatalog.decode(h("16 3c 11 04"), as: .heartRateMeasurement))
        let value = try heartRate.get()
        #expect(
            value as? HeartRateMeasurement
                == HeartRateMeasurement(
                    heartRate: 60, sensorContact: .detected, rrIntervals: [1041]))
        let battery = try #require(CharacteristicCatalog.decode(h("65"), as: .batteryLevel))
        #expect(throws: DecodeError.outOfRange(field: "battery_level", offset: 0, value: 101)) { try battery.get() }
        #expect(CharacteristicCatalog.decode(h("00"), as: BluetoothUUID(UInt16(0x2A00))) == nil)
        #expect(CharacteristicCatalog.decode(h("00"), as: .clientCharacteristicConfiguration) == nil)
        let byType = CharacteristicCatalog.decode([], as: RSCMeasurement.self)
        #expect(throws: DecodeError.empty) { try byType.get() }
    }

    @Test func decodeByA128BitUUIDFromBlueZ() throws {
        let uuid = try #require(BluetoothUUID("00002A37-0000-1000-8000-00805F9B34FB"))
        let result = try #require(CharacteristicCatalog.decode(h("00 44"), as: uuid))
        #expect((try result.get() as? HeartRateMeasurement)?.heartRate == 68)
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "-" ? "_" : $0 })
    }
}
