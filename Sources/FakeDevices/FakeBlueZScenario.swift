public import Foundation

/// What a FakeBlueZ serves: the adapter and the simulated peripherals, loadable from JSON so that a standalone
/// `wearhouse fake-bluez --scenario FILE` can use it.
///
/// ```json
/// { "adapterAddress": "00:AA:01:00:00:01",
///   "peripherals": [ { "kind": "chestStrap", "address": "C0:FF:EE:00:00:01", "seed": 7,
///                      "faults": { "duplicateEvery": 3 } } ] }
/// ```
///
/// Every field but `kind` and `address` of a peripheral may be left out.
public struct FakeBlueZScenario: Codable, Hashable, Sendable {
    /// The device models, with the names a scenario file uses.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// Heart rate with RR intervals, Device Information, battery.
        case chestStrap
        /// Optical heart rate without RR.
        case wristMonitor
        /// Running Speed and Cadence.
        case footpod
        /// PAMS step counter.
        case stepCounter
        /// InfiniTime-style watch: heart rate and the vendor step count.
        case infiniTime
        /// A two-user bathroom scale that stores readings while nobody listens.
        case bathroomScale
        /// A blood pressure cuff that measures once per connection and disconnects.
        case bloodPressureCuff
        /// A glucose meter that sends its stored records when asked (bonding required).
        case glucoseMeter
        /// A bike trainer: Cycling Power and FTMS Indoor Bike Data.
        case bikeTrainer
        /// A treadmill that reports its sessions (FTMS Treadmill Data and Status).
        case treadmill
        /// A thermometer that measures once per interval (intermediate temperatures, then the result).
        case thermometer
        /// A fingertip pulse oximeter: continuous SpO2 and pulse rate, and a spot-check now and then.
        case pulseOximeter

        /// The simulation's kind.
        public var scriptKind: PeripheralScript.Kind {
            switch self {
            case .chestStrap: .chestStrap
            case .wristMonitor: .wristMonitor
            case .footpod: .footpod
            case .stepCounter: .stepCounter
            case .infiniTime: .infiniTimeWatch
            case .bathroomScale: .bathroomScale
            case .bloodPressureCuff: .bloodPressureCuff
            case .glucoseMeter: .glucoseMeter
            case .bikeTrainer: .bikeTrainer
            case .treadmill: .treadmill
            case .thermometer: .thermometer
            case .pulseOximeter: .pulseOximeter
            }
        }
    }

    /// The faults a scenario can give a peripheral (``PeripheralFaults``, durations in seconds).
    public struct Faults: Codable, Hashable, Sendable {
        /// Every Nth value sent is malformed.
        public var malformedEvery: Int?
        /// Every Nth value sent is sent twice.
        public var duplicateEvery: Int?
        /// Reads and writes fail until paired.
        public var requiresPairing: Bool?
        /// Seconds after switch-on when the firmware changes (services reordered).
        public var firmwareUpdateAfterSeconds: Double?
        /// Seconds after switch-on when the peripheral goes silent.
        public var silentAfterSeconds: Double?

        /// Faults as given; all off by default.
        public init(
            malformedEvery: Int? = nil, duplicateEvery: Int? = nil, requiresPairing: Bool? = nil,
            firmwareUpdateAfterSeconds: Double? = nil, silentAfterSeconds: Double? = nil
        ) {
            self.malformedEvery = malformedEvery
            self.duplicateEvery = duplicateEvery
            self.requiresPairing = requiresPairing
            self.firmwareUpdateAfterSeconds = firmwareUpdateAfterSeconds
            self.silentAfterSeconds = silentAfterSeconds
        }

        /// The simulation's faults (non-positive counts are ignored).
        public var peripheralFaults: PeripheralFaults {
            PeripheralFaults(
                malformedEvery: malformedEvery.flatMap { $0 > 0 ? $0 : nil },
                duplicateEvery: duplicateEvery.flatMap { $0 > 0 ? $0 : nil },
                requiresPairing: requiresPairing ?? false,
                firmwareUpdateAt: firmwareUpdateAfterSeconds.map { .seconds($0) },
                silentAfter: silentAfterSeconds.map { .seconds($0) })
        }
    }

    /// One simulated peripheral.
    public struct Peripheral: Codable, Hashable, Sendable {
        /// The device model.
        public var kind: Kind
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// The advertised name; the kind's default when absent.
        public var name: String?
        /// Drives every simulated value.
        public var seed: UInt64?
        /// What goes wrong.
        public var faults: Faults?
        /// Whether discovery finds it (in radio range). Default `true`.
        public var nearby: Bool?
        /// Whether bluetoothd knows it at start (a Device1 object before any discovery). Default `false`.
        public var known: Bool?
        /// Whether it is paired (and bonded) at start; implies `known`. Default `false`.
        public var paired: Bool?
        /// The RSSI discovery reports, dBm. Default -60.
        public var rssi: Int16?
        /// Seconds between measurements of a heart-rate sensor, footpod or pulse oximeter. Default 1.
        public var measurementInterval: Double?
        /// Seconds between a scale's readings (a step counter's summaries, a thermometer's measurements, a pulse
        /// oximeter's spot-checks). Default 10.
        public var summaryInterval: Double?
        /// How many times a cuff measures (how many records a glucose meter holds at switch-on). Default 1.
        public var measurementCount: Int?
        /// A health device's clock at switch-on, Unix seconds of its local wall time. Default 2026-11-29 10:00:00
        /// (``PeripheralScript/simulationEpoch``).
        public var clockStart: Int64?
        /// A glucose meter's transfer pauses over a lost link instead of ending
        /// (``PeripheralScript/transferOutlivesLink``).
        public var transferOutlivesLink: Bool?

        /// A peripheral entry.
        public init(
            kind: Kind, address: String, name: String? = nil, seed: UInt64? = nil, faults: Faults? = nil,
            nearby: Bool? = nil, known: Bool? = nil, paired: Bool? = nil, rssi: Int16? = nil,
            measurementInterval: Double? = nil, summaryInterval: Double? = nil, measurementCount: Int? = nil,
            clockStart: Int64? = nil, transferOutlivesLink: Bool? = nil
        ) {
            self.kind = kind
            self.address = address
            self.name = name
            self.seed = seed
            self.faults = faults
            self.nearby = nearby
            self.known = known
            self.paired = paired
            self.rssi = rssi
            self.measurementInterval = measurementInterval
            self.summaryInterval = summaryInterval
            self.measurementCount = measurementCount
            self.clockStart = clockStart
            self.transferOutlivesLink = transferOutlivesLink
        }

        /// The simulation script for this entry.
        public var script: PeripheralScript {
            PeripheralScript(
                kind: kind.scriptKind, address: address, name: name, seed: seed ?? 1,
                faults: faults?.peripheralFaults ?? .none,
                summaryInterval: .milliseconds(Int64(min(max(summaryInterval ?? 10, 0.01), 86_400) * 1000)),
                measurementInterval: .milliseconds(Int64(max(measurementInterval ?? 1, 0.01) * 1000)),
                clockStart: clockStart ?? PeripheralScript.simulationEpoch,
                measurementCount: min(max(measurementCount ?? 1, 0), 1_000),
                transferOutlivesLink: transferOutlivesLink ?? false)
        }
    }

    /// The adapter's address. Default `00:AA:01:00:00:01`.
    public var adapterAddress: String?
    /// The adapter's name (`Name`, `Alias`). Default `fakebluez`.
    public var adapterName: String?
    /// The peripherals.
    public var peripherals: [Peripheral]

    /// A scenario.
    public init(adapterAddress: String? = nil, adapterName: String? = nil, peripherals: [Peripheral]) {
        self.adapterAddress = adapterAddress
        self.adapterName = adapterName
        self.peripherals = peripherals
    }

    /// Decodes a scenario from JSON.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(Self.self, from: json)
    }

    /// Loads a scenario file.
    public init(contentsOf url: URL) throws {
        try self.init(json: try Data(contentsOf: url))
    }
}
