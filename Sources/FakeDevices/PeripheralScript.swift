/// Describes one simulated peripheral: what it is, where, its seed and its faults. The same script always
/// makes a peripheral that sends the same bytes.
public struct PeripheralScript: Hashable, Sendable {
    /// The device models the simulation knows.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Heart rate with RR intervals, contact, energy expended, chest location, control point.
        case chestStrap = "chest-strap"
        /// Optical heart rate at the wrist: no RR, contact not supported.
        case wristMonitor = "wrist-monitor"
        /// Running Speed and Cadence with stride, distance and walking/running status.
        case footpod
        /// PAMS Step Counter Activity Summary Data by indication.
        case stepCounter = "step-counter"
        /// InfiniTime-style watch: heart rate and the vendor step count.
        case infiniTimeWatch = "infinitime-watch"
        /// A bathroom scale for two users that stores readings while nobody listens (``BathroomScale``).
        case bathroomScale = "bathroom-scale"
        /// A blood pressure cuff: intermediate pressures, one result, then it disconnects (``BloodPressureCuff``).
        case bloodPressureCuff = "blood-pressure-cuff"
        /// A glucose meter with 500 stored records, sent through its Record Access Control Point (``GlucoseMeter``).
        case glucoseMeter = "glucose-meter"
        /// A smart bike trainer: Cycling Power and FTMS Indoor Bike Data (``BikeTrainer``).
        case bikeTrainer = "bike-trainer"
        /// A treadmill reporting its sessions through FTMS (``Treadmill``).
        case treadmill
        /// A thermometer: intermediate temperatures, then a result, once per measurement interval (``Thermometer``).
        case thermometer
        /// A fingertip pulse oximeter: continuous SpO2 and pulse rate, and a spot-check now and then
        /// (``PulseOximeter``).
        case pulseOximeter = "pulse-oximeter"
    }

    /// The device model.
    public var kind: Kind
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The advertised name.
    public var name: String
    /// Drives every simulated value: the same seed gives the same bytes.
    public var seed: UInt64
    /// What goes wrong, if anything.
    public var faults: PeripheralFaults
    /// The Energy Expended counter at switch-on, kJ (set near 0xFFFF to see saturation).
    public var initialEnergyExpended: UInt16
    /// The battery loses 1 % per interval.
    public var batteryDrainInterval: Duration
    /// How often a step counter indicates its activity summary (a scale weighs, a thermometer measures, a pulse
    /// oximeter completes a spot-check).
    public var summaryInterval: Duration
    /// How often a heart-rate sensor, footpod or pulse oximeter notifies a measurement (1 s, as the profiles say;
    /// shorter for load tests).
    public var measurementInterval: Duration
    /// A health device's clock at switch-on, Unix seconds (its time stamps count from there); by default
    /// 2026-11-29 10:00:00, where the tests' simulated clocks start.
    public var clockStart: Int64
    /// How many measurements a blood pressure cuff takes (one per connection); how many records a glucose meter
    /// holds at switch-on.
    public var measurementCount: Int
    /// A glucose meter whose record transfer outlives a lost link (paused, not abandoned), so that a request
    /// on the next connection finds it still running and is refused with ATT 0xFE until it is aborted.
    public var transferOutlivesLink: Bool

    /// Where the tests' simulated wall clocks start: 2026-11-29 10:00:00 UTC.
    public static let simulationEpoch: Int64 = 1_795_946_400

    /// A script; the name defaults to the kind's ``defaultName(_:)``.
    public init(
        kind: Kind, address: String, name: String? = nil, seed: UInt64 = 1, faults: PeripheralFaults = .none,
        initialEnergyExpended: UInt16 = 0, batteryDrainInterval: Duration = .seconds(300),
        summaryInterval: Duration = .seconds(10), measurementInterval: Duration = .seconds(1),
        clockStart: Int64 = PeripheralScript.simulationEpoch, measurementCount: Int = 1,
        transferOutlivesLink: Bool = false
    ) {
        precondition(batteryDrainInterval > .zero, "the battery drain interval must be positive")
        precondition(summaryInterval > .zero, "the summary interval must be positive")
        precondition(measurementInterval > .zero, "the measurement interval must be positive")
        self.kind = kind
        self.address = address.uppercased()
        self.name = name ?? Self.defaultName(kind)
        self.seed = seed
        self.faults = faults
        self.initialEnergyExpended = initialEnergyExpended
        self.batteryDrainInterval = batteryDrainInterval
        self.summaryInterval = summaryInterval
        self.measurementInterval = measurementInterval
        self.clockStart = clockStart
        self.measurementCount = max(0, measurementCount)
        self.transferOutlivesLink = transferOutlivesLink
    }

    /// The advertised name a kind gets when the script gives none.
    public static func defaultName(_ kind: Kind) -> String {
        switch kind {
        case .chestStrap: "Fake HRM Strap"
        case .wristMonitor: "Fake Wrist HR"
        case .footpod: "Fake Footpod"
        case .stepCounter: "Fake PAMS Steps"
        case .infiniTimeWatch: "InfiniTime"
        case .bathroomScale: "Fake Scale"
        case .bloodPressureCuff: "Fake BP Cuff"
        case .glucoseMeter: "Fake Glucose Meter"
        case .bikeTrainer: "Fake Trainer"
        case .treadmill: "Fake Treadmill"
        case .thermometer: "Fake Thermometer"
        case .pulseOximeter: "Fake Oximeter"
        }
    }

    /// Builds the peripheral, wrapped in a ``MisbehavingPeripheral`` when the script has faults.
    public func makePeripheral() -> any SimulatedPeripheral {
        switch kind {
        case .chestStrap: wrap(HeartRateSensor(script: self, profile: .chestStrap))
        case .wristMonitor: wrap(HeartRateSensor(script: self, profile: .wristMonitor))
        case .footpod: wrap(Footpod(script: self))
        case .stepCounter: wrap(StepCounter(script: self))
        case .infiniTimeWatch: wrap(InfiniTimeWatch(script: self))
        case .bathroomScale: wrap(BathroomScale(script: self))
        case .bloodPressureCuff: wrap(BloodPressureCuff(script: self))
        case .glucoseMeter: wrap(GlucoseMeter(script: self))
        case .bikeTrainer: wrap(BikeTrainer(script: self))
        case .treadmill: wrap(Treadmill(script: self))
        case .thermometer: wrap(Thermometer(script: self))
        case .pulseOximeter: wrap(PulseOximeter(script: self))
        }
    }

    private func wrap<P: SimulatedPeripheral>(_ peripheral: P) -> any SimulatedPeripheral {
        faults.isEmpty ? peripheral : MisbehavingPeripheral(peripheral, faults: faults)
    }
}
