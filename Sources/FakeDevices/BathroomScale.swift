public import GATT
internal import Support

/// A simulated bathroom scale (Weight Scale service 0x181D) shared by two people.
///
/// Users 1 and 2 step on it in turn, every ``PeripheralScript/summaryInterval``, starting right after switch-on;
/// each weight (about 70 and 82 kg, varying a little from the seed) gets the scale's own time stamp, its clock
/// set to ``PeripheralScript/clockStart`` at switch-on (UTC wall time, as the tests' simulations run). While
/// nobody has indications enabled, readings are stored (at most ``storageCapacity``, oldest dropped, as scales
/// do); once a client enables them on a connection, the stored readings go out as indications, oldest first,
/// at the next step of the simulation, and new ones as they are taken. Like real scales that cannot tell
/// whether the last indication of a lost link was acknowledged, it sends the last reading of the previous
/// connection again after a reconnect: the gateway must store it once. Its clock is readable and writable as
/// Current Time (0x2A2B): a client may set it (``clockSettings``), and the readings taken afterwards carry the new
/// time.
public struct BathroomScale: SimulatedPeripheral {
    /// Readings kept while nobody listens.
    public static let storageCapacity = 25

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()
    /// Every reading taken, oldest first (sent or not).
    public private(set) var readings: [WeightMeasurement] = []
    /// When each of ``readings`` was taken, in simulation time.
    public private(set) var readingTimes: [Duration] = []
    /// The times clients wrote to Current Time, as written.
    public private(set) var clockSettings: [DateTime] = []

    private let interval: Duration
    private let clockStart: Int64
    private let baseWeights: [Double]
    private var generator: SplitMix64
    private var battery: BatteryModel
    private var index = 0
    private var stored: [WeightMeasurement] = []
    private var connected = false
    private var listening = false
    /// The last reading sent, and whether it goes out again on the next connection.
    private var lastSent: WeightMeasurement?
    private var resendLast = false
    private var lastTick: Duration = .zero
    /// Seconds a client's setting moved the clock by.
    private var clockAdjustment: Int64 = 0

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.weightScaleService])
        deviceInformation = DeviceInformationProfile(script: script)
        generator = SplitMix64(seed: script.seed)
        baseWeights = [generator.uniform(65...75), generator.uniform(78...86)]
        interval = script.summaryInterval
        clockStart = script.clockStart
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
    }

    /// Time stamp, multiple users, BMI not supported; 0.005 kg resolution.
    public static let feature = WeightScaleFeature(rawValue: 0x01 | 0x02 | 7 << 3)

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .weightScaleService,
                characteristics: [
                    CharacteristicDefinition(uuid: .weightScaleFeature, properties: .read),
                    CharacteristicDefinition(uuid: .weightMeasurement, properties: .indicate),
                ]),
            ServiceDefinition(
                uuid: .currentTimeService,
                characteristics: [CharacteristicDefinition(uuid: .currentTime, properties: [.read, .write])]),
            deviceInformation.service, BatteryModel.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .weightScaleFeature: return Self.feature.encoded()
        case .weightMeasurement: throw .readNotPermitted
        case .batteryLevel: return battery.encoded(at: lastTick)
        case .currentTime: return CurrentTime(dateTime: wallTime(at: lastTick)).encoded()
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        guard characteristic == .currentTime else { throw writeRefusal(characteristic) }
        // A time that names no second of a real date is refused, as the Current Time Service does (0x80).
        guard let time = try? CurrentTime(decoding: value), time.dateTime.isComplete else { throw .applicationError80 }
        let date = time.dateTime
        let written =
            CivilCalendar.days(year: Int64(date.year), month: Int64(date.month), day: Int64(date.day)) * 86_400
            + Int64(date.hours) * 3_600 + Int64(date.minutes) * 60 + Int64(date.seconds)
        clockAdjustment = written - (clockStart + lastTick.components.seconds)
        clockSettings.append(date)
    }

    public mutating func linkChanged(connected: Bool, at time: Duration) {
        self.connected = connected
        if !connected {
            listening = false
            resendLast = lastSent != nil
        }
    }

    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {
        if characteristic == .weightMeasurement, connected { listening = true }
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        if listening {
            if resendLast, let lastSent { out.append(send(lastSent, at: max(time, lastTick))) }
            resendLast = false
            for reading in stored { out.append(send(reading, at: max(time, lastTick))) }
            stored = []
        }
        while true {
            let tick = interval * index + .milliseconds(100)
            guard tick <= time else { break }
            let reading = takeReading(at: tick)
            readings.append(reading)
            readingTimes.append(tick)
            if listening {
                out.append(send(reading, at: tick))
            } else {
                stored.append(reading)
                if stored.count > Self.storageCapacity { stored.removeFirst() }
            }
            index += 1
        }
        lastTick = max(lastTick, time)
        return out
    }

    private mutating func takeReading(at time: Duration) -> WeightMeasurement {
        let user = UInt8(index % 2 + 1)
        let kilograms = baseWeights[index % 2] + generator.uniform(-0.5...0.5)
        return WeightMeasurement(
            weight: UInt16((kilograms / 0.005).rounded()), timeStamp: wallTime(at: time), userID: user)
    }

    private mutating func send(_ reading: WeightMeasurement, at time: Duration) -> PeripheralEmission {
        lastSent = reading
        let emission = PeripheralEmission(
            characteristic: .weightMeasurement, value: reading.encoded(), at: time, isIndication: true)
        groundTruth.emissions.append(emission)
        return emission
    }

    /// The scale's clock at `time` since switch-on.
    func wallTime(at time: Duration) -> DateTime {
        deviceWallTime(clockStart: clockStart + clockAdjustment, at: time)
    }
}

/// A device clock set to `clockStart` (Unix seconds) at switch-on, `time` later, as a Date Time.
func deviceWallTime(clockStart: Int64, at time: Duration) -> DateTime {
    let seconds = clockStart + time.components.seconds
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let within = seconds - days * 86_400
    let date = CivilCalendar.date(days: days)
    return DateTime(
        year: UInt16(clamping: date.year), month: UInt8(clamping: date.month), day: UInt8(clamping: date.day),
        hours: UInt8(within / 3600), minutes: UInt8(within / 60 % 60), seconds: UInt8(within % 60))
}
