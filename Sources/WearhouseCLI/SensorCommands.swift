import BlueZ
import DBus
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import StoreEngine
import Support

/// `wearhouse pair`: enrols a sensor (pairs only when needed) into the store's registry.
struct PairCommand: Command {
    let name = "pair"
    let abstract = "Enrol a sensor: connect, pair if it needs it, trust it, read its details, record who wears it."
    var discussion: String {
        """
        The sensor must be awake (a strap is worn, a footpod moved). It is found among the devices bluetoothd knows,
        else by a discovery filtered on the services of the sensors the gateway reads (heart rate, running speed
        and cadence, step counters, InfiniTime, scales, body composition, blood pressure, thermometers, pulse
        oximeters, glucose meters, cycling power, fitness machines). Pairing happens only when the sensor refuses to be read without it, or with --pair; a running
        'wearhouse run' picks the sensor up within seconds. Locations: \(locationNames).
        """
    }

    struct Options: CommandOptions {
        var target = ""
        var subject: String?
        var label: String?
        var location: String?
        var timeout: Duration = .seconds(30)
        var store: String?
        var bus: DBusAddress = .system
        var adapter: String?
        var pair = false
        var confirmPasskey = false
        var acquireNotify = false
        var json = false
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required("address|name", \.target, kind: .sensor, help: "The sensor's Bluetooth address, or its name.")
        ],
        options: [
            .text("subject", value: "name", \.subject, help: "Who wears the sensor."),
            .text("label", value: "text", \.label, help: "A name for people ('Bike strap')."),
            .text(
                "location", value: "where", \.location,
                help: "Where it is worn, when the sensor does not say or says wrong."),
            .seconds("timeout", in: 1...600, \.timeout, help: "How long to look for, connect to and pair with it."),
            StoreOptions.store(\.store), BluetoothOptions.bus(\.bus), BluetoothOptions.adapter(\.adapter),
            .flag("pair", \.pair, help: "Pair (bond) even when the sensor works without."),
            .flag(
                "confirm-passkey", \.confirmPasskey,
                help: "Pair (implies --pair) by numeric comparison, for a sensor with a display: the passkey is "
                    + "printed on standard error; check that the sensor shows it and confirm there."),
            .flag(
                "acquire-notify", \.acquireNotify,
                help: "Take notifications through an AcquireNotify socket (less D-Bus traffic) for it."),
            .flag("json", \.json, help: "Print the result as JSON."),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let store: any HealthStoreEngine
        do throws(StoreLocation.Failure) {
            store = try StoreLocation.open(store: options.store, mustExist: false)
        } catch {
            console.error(error.message)
            return error.code
        }
        guard
            let (bus, central) = await BluetoothOptions.connect(
                options.bus, console: console, confirmPasskey: options.confirmPasskey)
        else {
            return .unavailable
        }
        // allowed: a defer cannot await; the bus closes as the command returns and the process exits
        defer { Task { await bus.close() } }
        let request = SensorEnrolment.Request(
            target: options.target, subject: options.subject, label: options.label, location: options.location,
            adapter: options.adapter, forcePairing: options.pair || options.confirmPasskey,
            notifyMode: options.acquireNotify ? .acquired : .properties, timeout: options.timeout)
        do {
            let result = try await SensorEnrolment(central: central, registry: store).enrol(request)
            await central.shutdown(disconnecting: [])
            let sensor = result.sensor
            if options.json {
                console.out(SensorsCommand.json(sensor, status: nil) + "\n")
            } else {
                let device = sensor.device
                let model = [device?.manufacturer, device?.model].compactMap { $0 }.joined(separator: " ")
                console.out(
                    "Enrolled \(sensor.address)\(sensor.name.map { " (\($0))" } ?? "")"
                        + (model.isEmpty ? "" : ", \(model)") + (sensor.subject.map { ", worn by \($0)" } ?? "")
                        + (result.pairedNow ? ", paired" : "")
                        + (result.metadata.batteryPercent.map { ", battery \($0) %" } ?? "") + "\n")
            }
            return .success
        } catch let failure as SensorEnrolment.Failure {
            await central.shutdown(disconnecting: [])
            console.error(failure.message)
            switch failure.underlying?.kind {
            case .unavailable?: return .unavailable
            case nil where failure.message.hasPrefix("unknown location"): return .usage
            default: return .unavailable
            }
        } catch {
            await central.shutdown(disconnecting: [])
            console.error("\(error)")
            return .ioError
        }
    }
}

/// `wearhouse sensors`: the registry with each sensor's last reported state.
struct SensorsCommand: Command {
    let name = "sensors"
    let abstract = "List the enrolled sensors: model, serial, firmware, battery, location, wearer, state, counts."

    struct Options: CommandOptions {
        var json = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .flag("json", \.json, help: "One JSON object per sensor."), StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            let sensors = try await store.registeredSensors()
            let statuses = Dictionary(
                try await store.sensorStatuses().map { ($0.address, $0) }, uniquingKeysWith: { $1 })
            if options.json {
                for sensor in sensors { console.out(Self.json(sensor, status: statuses[sensor.address]) + "\n") }
                return .success
            }
            guard !sensors.isEmpty else {
                console.err("No sensors enrolled. Enrol one with 'wearhouse pair <address>'.\n")
                return .success
            }
            let header = [
                "ADDRESS", "SUBJECT", "MODEL", "SERIAL", "FIRMWARE", "BATTERY", "LOCATION", "STATE",
                "LAST SAMPLE", "SAMPLES", "DROPPED",
            ]
            var rows = [header]
            for sensor in sensors {
                let status = statuses[sensor.address]
                let device = sensor.device
                rows.append([
                    sensor.address, sensor.subject ?? "-",
                    [device?.manufacturer, device?.model].compactMap { $0 }.joined(separator: " ").nonEmpty ?? "-",
                    device?.serialNumber ?? "-", device?.firmwareVersion ?? "-",
                    status?.batteryPercent.map { "\($0) %" } ?? "-", sensor.location ?? "sensor's",
                    status?.state ?? "not running",
                    status?.lastSampleAt.map { StoreArguments.format($0, offsetSeconds: 0) } ?? "-",
                    status.map { "\($0.samples)" } ?? "0", status.map { "\($0.dropped)" } ?? "0",
                ])
            }
            let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                console.out(
                    zip(row, widths).map { $0.padding(to: $1 + 2) }.joined().trimmingCharacters(in: .whitespaces) + "\n"
                )
            }
            return .success
        }
    }

    static func json(_ sensor: RegisteredSensor, status: SensorStatus?) -> String {
        let device = sensor.device
        func text(_ value: String?) -> FieldValue { value.map { .string($0) } ?? .null }
        var fields = [
            Field("address", .string(sensor.address)), Field("name", text(sensor.name)),
            Field("label", text(sensor.label)), Field("subject", text(sensor.subject)),
            Field("location", text(sensor.location)), Field("manufacturer", text(device?.manufacturer)),
            Field("model", text(device?.model)), Field("serial", text(device?.serialNumber)),
            Field("hardware", text(device?.hardwareVersion)), Field("firmware", text(device?.firmwareVersion)),
            Field("software", text(device?.softwareVersion)), Field("paired", .bool(sensor.paired)),
            Field("services", .list(sensor.services.map { .string($0) })),
        ]
        if let status {
            fields += [
                Field("state", .string(status.state)), Field("battery", .optional(status.batteryPercent)),
                Field(
                    "last_sample",
                    status.lastSampleAt.map { .string(StoreArguments.format($0, offsetSeconds: 0)) } ?? .null),
                Field("notifications", .int(status.notifications)), Field("samples", .int(status.samples)),
                Field("malformed", .int(status.malformed)), Field("dropped", .int(status.dropped)),
                Field("reconnects", .int(status.reconnects)),
            ]
        } else {
            fields.append(Field("state", .string("not running")))
        }
        return FieldValue.object(fields).json
    }
}

/// `wearhouse forget`: removes a sensor from the registry (a running service releases it), and from bluetoothd.
struct ForgetCommand: Command {
    let name = "forget"
    let abstract = "Remove a sensor from the registry; a running service disconnects it. Its samples stay."
    var discussion: String {
        """
        bluetoothd is told too, so that it stops reconnecting the sensor: a sensor that was paired when it was
        enrolled is removed from bluetoothd (RemoveDevice: its pairing and trust go; pair it again to use it),
        another one is no longer trusted. --unpair removes it from bluetoothd whatever it was (also when it is
        no longer enrolled); --keep-pairing leaves bluetoothd alone. When bluetoothd cannot be reached, the
        sensor is still forgotten and a warning says what was left (with --unpair it is an error, 69).
        """
    }

    struct Options: CommandOptions {
        /// Normalized (upper case).
        var address = ""
        var store: String?
        var unpair = false
        var keepPairing = false
        var bus: DBusAddress = .system
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required(
                "address", \.address, kind: .sensor, help: "The sensor's Bluetooth address (AA:BB:CC:DD:EE:FF)."
            ) {
                text throws(UsageError) in
                guard let normalized = RegisteredSensor.normalizedAddress(text) else {
                    throw UsageError("\(echo(text)) is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
                }
                return normalized
            }
        ],
        options: [
            StoreOptions.store(\.store),
            .flag("unpair", \.unpair, help: "Remove it from bluetoothd (pairing, trust) whatever it was."),
            .flag("keep-pairing", \.keepPairing, help: "Leave bluetoothd's pairing and trust as they are."),
            BluetoothOptions.bus(\.bus),
        ],
        rules: [.exclusive("unpair", "keep-pairing")])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let normalized = options.address
        var enrolled: RegisteredSensor?
        let status = await runStoreCommand(console) {
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            enrolled = try await store.registeredSensors().first { $0.address == normalized }
            guard try await store.forgetSensor(normalized) else {
                if options.unpair { return .success }
                console.error("no sensor \(normalized) is enrolled (see 'wearhouse sensors')")
                return .noInput
            }
            console.err("Forgot \(normalized); its samples stay in the store.\n")
            return .success
        }
        guard status == .success, !options.keepPairing else { return status }
        let remove = options.unpair || enrolled?.paired == true
        return await release(normalized, remove: remove, required: options.unpair, options.bus, console: console)
    }

    /// Removes (`remove`) or untrusts the device in bluetoothd. Unless `required`, a failure is a warning.
    private func release(
        _ address: String, remove: Bool, required: Bool, _ busAddress: DBusAddress, console: Console
    ) async -> ExitCode {
        let reporting =
            required
            ? console
            : Console(
                out: console.out, err: { console.err($0.replacingOccurrences(of: "Error: ", with: "warning: ")) },
                isTerminal: console.isTerminal)
        let left =
            "\(address) is still \(remove ? "paired and trusted" : "trusted") in bluetoothd, which may reconnect it "
            + "('wearhouse forget \(address) --unpair' removes it)"
        guard let (bus, central) = await BluetoothOptions.connect(busAddress, console: reporting) else {
            reporting.error(left)
            return required ? .unavailable : .success
        }
        // allowed: a defer cannot await; the bus closes as the command returns and the process exits
        defer { Task { await bus.close() } }
        do throws(CentralError) {
            let known = try await central.knownPeripherals().filter { $0.id.address == address }
            for info in known {
                if remove {
                    try await central.remove(info.id)
                } else {
                    try await central.setTrusted(info.id, false)
                }
            }
            await central.shutdown(disconnecting: [])
            if !known.isEmpty {
                console.err(
                    remove
                        ? "Removed \(address) from bluetoothd (its pairing and trust).\n"
                        : "\(address) is no longer trusted by bluetoothd.\n")
            }
            return .success
        } catch {
            await central.shutdown(disconnecting: [])
            reporting.error("\(error); \(left)")
            return required ? .unavailable : .success
        }
    }
}

/// `wearhouse scan`: nearby sensors, through the same client the service uses.
struct ScanCommand: Command {
    let name = "scan"
    let abstract = "List nearby sensors (name, address, services, signal) for a few seconds."

    struct Options: CommandOptions {
        var duration: Duration = .seconds(10)
        var json = false
        var all = false
        var bus: DBusAddress = .system
        var adapter: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .seconds("duration", in: 0.1...3600, \.duration, help: "How long to scan."),
        .flag("json", \.json, help: "One JSON object per sensor."),
        .flag("all", \.all, help: "Every device, not only health sensors."), BluetoothOptions.bus(\.bus),
        BluetoothOptions.adapter(\.adapter),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let duration = options.duration
        guard let (bus, central) = await BluetoothOptions.connect(options.bus, console: console) else {
            return .unavailable
        }
        let services = options.all ? [] : GatewayService.discoveryServices
        let events = central.events()
        do throws(CentralError) {
            try await central.startDiscovery(services: services, on: options.adapter)
        } catch {
            console.error("cannot scan: \(error)", hint: "'wearhouse doctor' says what is missing.")
            await central.shutdown(disconnecting: [])
            await bus.close()
            return .unavailable
        }
        var found: [PeripheralID: PeripheralInfo] = [:]
        // allowed: cancelled and awaited below (its value is what the scan saw); it does not outlive the command
        let collector = Task {
            var seen: [PeripheralID: PeripheralInfo] = [:]
            for await event in events {
                if case .discovered(let info) = event { seen[info.id] = info }
                if Task.isCancelled { break }
            }
            return seen
        }
        try? await Task.sleep(for: duration)
        await central.shutdown(disconnecting: [])
        found = await collector.value
        await bus.close()
        let sensors = found.values.filter { info in
            services.isEmpty || info.services.contains(where: services.contains)
        }.sorted { ($0.rssi ?? -200) > ($1.rssi ?? -200) }
        for info in sensors {
            let kinds = info.services.compactMap(Self.serviceName)
            if options.json {
                let fields = [
                    Field("address", .string(info.id.address)), Field("adapter", .string(info.id.adapter)),
                    Field("name", info.name.map { .string($0) } ?? .null), Field("rssi", .optional(info.rssi)),
                    Field("services", .list(kinds.map { .string($0) })), Field("paired", .bool(info.paired)),
                ]
                console.out(FieldValue.object(fields).json + "\n")
            } else {
                console.out(
                    "\(info.id.address)  \((info.rssi.map { "\($0) dBm" } ?? "-").padding(to: 8))"
                        + "\((info.name ?? "(no name)").padding(to: 22))\(kinds.joined(separator: ", "))\n")
            }
        }
        if sensors.isEmpty { console.err("No sensors found in \(duration).\n") }
        return .success
    }

    static func serviceName(_ uuid: BluetoothUUID) -> String? {
        switch uuid {
        case .heartRateService: "heart rate"
        case .runningSpeedAndCadenceService: "running speed and cadence"
        case .physicalActivityMonitorService: "step counter (PAMS)"
        case .infiniTimeMotionService: "InfiniTime steps"
        case .cyclingSpeedAndCadenceService: "cycling speed and cadence"
        case .weightScaleService: "weight scale"
        case .bodyCompositionService: "body composition"
        case .bloodPressureService: "blood pressure"
        case .healthThermometerService: "thermometer"
        case .pulseOximeterService: "pulse oximeter"
        case .glucoseService: "glucose"
        case .cyclingPowerService: "cycling power"
        case .fitnessMachineService: "fitness machine"
        case .batteryService: "battery"
        case .deviceInformationService: nil
        default: nil
        }
    }
}
