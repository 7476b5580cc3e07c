/// A characteristic value type: decodes from the bytes a sensor sends, encodes back (for fakes and round
/// trips), and describes itself as named fields (for `wearhouse decode`, traces and logs).
///
/// Wire values stay raw in the stored properties (1/1024 s, 1/256 m/s, kJ); conversions to SI or
/// HealthKit units happen at the edges, in ``fields`` and in the gateway's sample builder.
public protocol CharacteristicValue: Equatable, Sendable {
    /// The characteristic's UUID.
    static var uuid: BluetoothUUID { get }
    /// The kebab-case name accepted by `wearhouse decode`, e.g. `heart-rate-measurement`.
    static var name: String { get }
    /// Decodes a value exactly as received; see ``DecodingPolicy`` for the edge cases.
    init(decoding bytes: borrowing [UInt8]) throws(DecodeError)
    /// The bytes a sensor would send for this value. Flags are derived from which fields are present.
    func encoded() -> [UInt8]
    /// The decoded fields with their units, in wire order. JSON output uses exactly these names.
    var fields: [Field] { get }
}

/// One decoded field: a snake_case name, a value and, for quantities, the unit of that value.
public struct Field: Equatable, Sendable {
    public let name: String
    public let value: FieldValue
    public let unit: String?

    public init(_ name: String, _ value: FieldValue, unit: String? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}

/// A JSON-shaped value, so that decoded characteristics can be printed without Foundation.
public enum FieldValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case list([FieldValue])
    case object([Field])

    public static func int(_ value: some BinaryInteger) -> FieldValue { .integer(Int64(value)) }

    /// `.int` for a present value, `.null` when the field is absent.
    public static func optional(_ value: (some BinaryInteger)?) -> FieldValue {
        value.map { .integer(Int64($0)) } ?? .null
    }

    /// `.double` for a present value, `.null` when the field is absent.
    public static func optional(_ value: Double?) -> FieldValue {
        value.map { .double($0) } ?? .null
    }
}

/// Every characteristic wearhouse can decode, by UUID and by name.
public enum CharacteristicCatalog {
    /// The known characteristic types.
    public static let all: [any CharacteristicValue.Type] = [
        HeartRateMeasurement.self, BodySensorLocation.self, HeartRateControlPoint.self,
        RSCMeasurement.self, RSCFeature.self, SensorLocation.self, SCControlPoint.self,
        CSCMeasurement.self, CSCFeature.self,
        BatteryLevel.self,
        ManufacturerNameString.self, ModelNumberString.self, SerialNumberString.self,
        HardwareRevisionString.self, FirmwareRevisionString.self, SoftwareRevisionString.self,
        SystemID.self, PnPID.self,
        StepCounterActivitySummaryData.self, InfiniTimeStepCount.self,
        DateTime.self, WeightMeasurement.self, WeightScaleFeature.self,
        BodyCompositionMeasurement.self, BodyCompositionFeature.self,
        BloodPressureMeasurement.self, IntermediateCuffPressure.self, BloodPressureFeature.self,
        TemperatureMeasurement.self, TemperatureType.self, IntermediateTemperature.self, MeasurementInterval.self,
        PLXSpotCheckMeasurement.self, PLXContinuousMeasurement.self, PLXFeatures.self,
        GlucoseMeasurement.self, GlucoseMeasurementContext.self, GlucoseFeature.self, RecordAccessControlPoint.self,
        CyclingPowerMeasurement.self, CyclingPowerFeature.self, FitnessMachineFeature.self, TreadmillData.self,
        IndoorBikeData.self, RowerData.self, FitnessMachineStatus.self,
        CurrentTime.self, UserIndex.self, UserControlPoint.self,
    ]

    /// The type that decodes `uuid`, if wearhouse knows it.
    public static func type(for uuid: BluetoothUUID) -> (any CharacteristicValue.Type)? {
        all.first { $0.uuid == uuid }
    }

    /// Looks a characteristic up by UUID (`2a37`, `0x2A37`, the 128-bit form) or by name
    /// (`heart-rate-measurement`; underscores and case are accepted, a trailing `-string` may be left off).
    public static func type(named text: String) -> (any CharacteristicValue.Type)? {
        if let uuid = BluetoothUUID(text) { return type(for: uuid) }
        let wanted = normalized(text)
        return all.first { normalized($0.name) == wanted || normalized($0.name) == wanted + "-string" }
    }

    /// Decodes `bytes` as the characteristic `uuid`; `nil` when wearhouse does not know the characteristic.
    public static func decode(_ bytes: [UInt8], as uuid: BluetoothUUID) -> Result<any CharacteristicValue, DecodeError>?
    {
        guard let type = type(for: uuid) else { return nil }
        return decode(bytes, as: type)
    }

    /// Decodes `bytes` as `type`.
    public static func decode(
        _ bytes: [UInt8], as type: any CharacteristicValue.Type
    ) -> Result<any CharacteristicValue, DecodeError> {
        do throws(DecodeError) {
            return .success(try type.init(decoding: bytes))
        } catch {
            return .failure(error)
        }
    }

    private static func normalized(_ text: String) -> String {
        String(text.lowercased().map { $0 == "_" || $0 == " " ? "-" : $0 })
    }
}
