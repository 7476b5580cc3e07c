/// The services, characteristics and descriptors wearhouse knows by name.
///
/// Numbers are the Bluetooth SIG assigned numbers; the InfiniTime UUIDs come from InfiniTime's
/// `doc/MotionService.md`.
extension BluetoothUUID {
    // Services
    public static let heartRateService = BluetoothUUID(UInt16(0x180D))
    public static let runningSpeedAndCadenceService = BluetoothUUID(UInt16(0x1814))
    public static let cyclingSpeedAndCadenceService = BluetoothUUID(UInt16(0x1816))
    public static let physicalActivityMonitorService = BluetoothUUID(UInt16(0x183E))
    public static let deviceInformationService = BluetoothUUID(UInt16(0x180A))
    public static let batteryService = BluetoothUUID(UInt16(0x180F))
    public static let healthThermometerService = BluetoothUUID(UInt16(0x1809))
    public static let bloodPressureService = BluetoothUUID(UInt16(0x1810))
    public static let bodyCompositionService = BluetoothUUID(UInt16(0x181B))
    public static let weightScaleService = BluetoothUUID(UInt16(0x181D))
    public static let pulseOximeterService = BluetoothUUID(UInt16(0x1822))
    /// InfiniTime (PineTime) Motion Service.
    public static let infiniTimeMotionService = BluetoothUUID(high: 0x0003_0000_78FC_48FE, low: 0x8E23_433B_3A19_42D0)

    // Heart Rate
    public static let heartRateMeasurement = BluetoothUUID(UInt16(0x2A37))
    public static let bodySensorLocation = BluetoothUUID(UInt16(0x2A38))
    public static let heartRateControlPoint = BluetoothUUID(UInt16(0x2A39))

    // Running and cycling speed and cadence
    public static let rscMeasurement = BluetoothUUID(UInt16(0x2A53))
    public static let rscFeature = BluetoothUUID(UInt16(0x2A54))
    public static let scControlPoint = BluetoothUUID(UInt16(0x2A55))
    public static let cscMeasurement = BluetoothUUID(UInt16(0x2A5B))
    public static let cscFeature = BluetoothUUID(UInt16(0x2A5C))
    public static let sensorLocation = BluetoothUUID(UInt16(0x2A5D))

    // Physical Activity Monitor
    public static let pamsFeatures = BluetoothUUID(UInt16(0x2B3B))
    public static let stepCounterActivitySummaryData = BluetoothUUID(UInt16(0x2B40))

    // Vendor: InfiniTime step count, uint32 LE, read + notify.
    public static let infiniTimeStepCount = BluetoothUUID(high: 0x0003_0001_78FC_48FE, low: 0x8E23_433B_3A19_42D0)

    // Health devices: time, weight scale, body composition, blood pressure, thermometer, pulse oximeter
    public static let dateTime = BluetoothUUID(UInt16(0x2A08))
    public static let weightMeasurement = BluetoothUUID(UInt16(0x2A9D))
    public static let weightScaleFeature = BluetoothUUID(UInt16(0x2A9E))
    public static let bodyCompositionMeasurement = BluetoothUUID(UInt16(0x2A9C))
    public static let bodyCompositionFeature = BluetoothUUID(UInt16(0x2A9B))
    public static let bloodPressureMeasurement = BluetoothUUID(UInt16(0x2A35))
    public static let intermediateCuffPressure = BluetoothUUID(UInt16(0x2A36))
    public static let bloodPressureFeature = BluetoothUUID(UInt16(0x2A49))
    public static let temperatureMeasurement = BluetoothUUID(UInt16(0x2A1C))
    public static let temperatureType = BluetoothUUID(UInt16(0x2A1D))
    public static let intermediateTemperature = BluetoothUUID(UInt16(0x2A1E))
    public static let measurementInterval = BluetoothUUID(UInt16(0x2A21))
    public static let plxSpotCheckMeasurement = BluetoothUUID(UInt16(0x2A5E))
    public static let plxContinuousMeasurement = BluetoothUUID(UInt16(0x2A5F))
    public static let plxFeatures = BluetoothUUID(UInt16(0x2A60))

    // Glucose meter (`docs/gatt-glucose.md`)
    public static let glucoseService = BluetoothUUID(UInt16(0x1808))
    public static let glucoseMeasurement = BluetoothUUID(UInt16(0x2A18))
    public static let glucoseMeasurementContext = BluetoothUUID(UInt16(0x2A34))
    public static let glucoseFeature = BluetoothUUID(UInt16(0x2A51))
    public static let recordAccessControlPoint = BluetoothUUID(UInt16(0x2A52))

    // Current Time Service and User Data Service (`docs/gatt-health-devices.md`): decoded, never written
    public static let currentTimeService = BluetoothUUID(UInt16(0x1805))
    public static let currentTime = BluetoothUUID(UInt16(0x2A2B))
    public static let userDataService = BluetoothUUID(UInt16(0x181C))
    public static let userIndex = BluetoothUUID(UInt16(0x2A9A))
    public static let userControlPoint = BluetoothUUID(UInt16(0x2A9F))

    /// The characteristics their specifications send as indications (acknowledged) rather than notifications:
    /// the health devices' results and the control points' responses (a glucose meter's RACP, the User Data
    /// Service's). BlueZ delivers both the same way; a trace records these as `indication`.
    public static let indicatedCharacteristics: Set<BluetoothUUID> = [
        .weightMeasurement, .bodyCompositionMeasurement, .bloodPressureMeasurement, .temperatureMeasurement,
        .plxSpotCheckMeasurement, .recordAccessControlPoint, .userControlPoint,
    ]

    // Device Information
    public static let manufacturerNameString = BluetoothUUID(UInt16(0x2A29))
    public static let modelNumberString = BluetoothUUID(UInt16(0x2A24))
    public static let serialNumberString = BluetoothUUID(UInt16(0x2A25))
    public static let hardwareRevisionString = BluetoothUUID(UInt16(0x2A27))
    public static let firmwareRevisionString = BluetoothUUID(UInt16(0x2A26))
    public static let softwareRevisionString = BluetoothUUID(UInt16(0x2A28))
    public static let systemID = BluetoothUUID(UInt16(0x2A23))
    public static let pnpID = BluetoothUUID(UInt16(0x2A50))

    // Battery
    public static let batteryLevel = BluetoothUUID(UInt16(0x2A19))

    // Descriptors
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))

    // Bike trainers and treadmills: Cycling Power and Fitness Machine (docs/gatt-fitness-machines.md)
    public static let cyclingPowerService = BluetoothUUID(UInt16(0x1818))
    public static let fitnessMachineService = BluetoothUUID(UInt16(0x1826))
    public static let cyclingPowerMeasurement = BluetoothUUID(UInt16(0x2A63))
    public static let cyclingPowerFeature = BluetoothUUID(UInt16(0x2A65))
    public static let fitnessMachineFeature = BluetoothUUID(UInt16(0x2ACC))
    public static let treadmillData = BluetoothUUID(UInt16(0x2ACD))
    public static let rowerData = BluetoothUUID(UInt16(0x2AD1))
    public static let indoorBikeData = BluetoothUUID(UInt16(0x2AD2))
    public static let fitnessMachineStatus = BluetoothUUID(UInt16(0x2ADA))
}
