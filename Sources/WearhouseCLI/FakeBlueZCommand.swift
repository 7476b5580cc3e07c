import DBus
import FakeDevices
import Foundation
import GATT
import Traces

/// `wearhouse fake-bluez`: runs FakeBlueZ standalone, so wearhouse (or anything else that speaks org.bluez)
/// can be tried without a radio.
struct FakeBlueZCommand: Command {
    let name = "fake-bluez"
    let abstract = "Serve a fake bluetoothd (org.bluez) with simulated sensors on a D-Bus bus."
    var discussion: String {
        """
        Never point this at the real system bus while bluetoothd runs. Start a private bus first:

          dbus-daemon --config-file=bus.conf --print-address --fork     # a config with <type>system</type>
          wearhouse fake-bluez --address unix:path=/tmp/bus &
          DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/bus busctl tree org.bluez

        The scenario file is JSON: {"adapterAddress": "00:AA:01:00:00:01", "peripherals": [{"kind": "chestStrap",
        "address": "C0:FF:EE:00:00:01", "seed": 7, "nearby": true, "faults": {"duplicateEvery": 3}}]}; kinds are
        chestStrap, wristMonitor, footpod, stepCounter, infiniTime, bathroomScale, bloodPressureCuff, glucoseMeter,
        bikeTrainer, treadmill, thermometer, pulseOximeter. Without one, two chest straps (known, as if paired
        before) and a wrist monitor and a footpod (found by discovery) are served. Sensors run in real time until
        the process is stopped or --duration passes.
        """
    }

    /// What `--bus` names.
    enum Bus: String, CaseIterable, Sendable {
        case system, session
    }

    struct Options: CommandOptions {
        var address: String?
        var bus: Bus?
        var scenario: String?
        var trace: String?
        var duration: Duration?
    }

    let syntax = CommandSyntax<Options>(
        options: [
            .text("address", value: "dbus-address", \.address, help: "The bus to serve on, e.g. unix:path=/tmp/bus."),
            .choice(
                "bus", \.bus,
                help:
                    "Serve on the system or the session bus (honours DBUS_SYSTEM_BUS_ADDRESS / DBUS_SESSION_BUS_ADDRESS)."
            ),
            .text("scenario", value: "file", \.scenario, kind: .path, help: "The peripherals to simulate (JSON)."),
            .text(
                "trace", value: "file", \.trace, kind: .path,
                help: "Also serve the sensors of a recorded trace, sending what they sent when they sent it."),
            .seconds("duration", in: anySeconds, \.duration, help: "Stop after this many seconds."),
        ],
        rules: [.oneOf("address", "bus")])

    /// What is served without a scenario file.
    static let defaultScenario = FakeBlueZScenario(peripherals: [
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:01", name: "Chest strap A", seed: 1, nearby: true, known: true),
        .init(
            kind: .chestStrap, address: "C0:FF:EE:00:00:02", name: "Chest strap B", seed: 2, nearby: true, known: true),
        .init(kind: .wristMonitor, address: "C0:FF:EE:00:00:03", name: "Wrist monitor", seed: 3, nearby: true),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:04", name: "Footpod", seed: 4, nearby: true),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let address: DBusAddress =
            switch (options.address, options.bus) {
            case (let text?, _): .address(text)
            case (nil, .session?): .session
            case (nil, _): .system
            }
        var scenario = Self.defaultScenario
        if let path = options.scenario {
            do {
                scenario = try FakeBlueZScenario(contentsOf: URL(fileURLWithPath: path))
            } catch {
                console.error("cannot read the scenario \(path): \(error)")
                return FileManager.default.fileExists(atPath: path) ? .dataError : .noInput
            }
        }
        var recorded: [RecordedPeripheral] = []
        if let path = options.trace {
            do {
                recorded = try Self.peripherals(fromTrace: path)
            } catch {
                console.error("cannot read the trace \(path): \(error)")
                return FileManager.default.fileExists(atPath: path) ? .dataError : .noInput
            }
            // A trace replaces the default sensors unless a scenario was asked for as well.
            if options.scenario == nil { scenario.peripherals = [] }
        }
        let fake: FakeBlueZ
        do {
            fake = try await FakeBlueZ.start(on: address, scenario: scenario, peripherals: recorded)
        } catch {
            console.error("cannot serve org.bluez on \(address): \(error)")
            return .unavailable
        }
        console.err(
            "FakeBlueZ serving org.bluez on \(address) with \(scenario.peripherals.count + recorded.count) peripherals: "
                + (scenario.peripherals.map { "\($0.kind.rawValue) \($0.address)" }
                + recorded.map { "recorded \($0.identity.address)" }).joined(separator: ", ") + "\n")
        await fake.inRealTime {
            if let duration = options.duration {
                try? await Task.sleep(for: duration)
            } else {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
        }
        await fake.stop()
        return .success
    }

    /// One recorded peripheral per sensor of the trace at `path`: its notifications at their times since the
    /// trace's first line, and its Device Information, locations and reads as values to read.
    static func peripherals(fromTrace path: String) throws -> [RecordedPeripheral] {
        let records = try TraceReader(path: path).readAll()
        var start: Duration?
        var sensors: [String: TraceSensor] = [:]
        var order: [String] = []
        var emissions: [String: [PeripheralEmission]] = [:]
        var reads: [String: [BluetoothUUID: [UInt8]]] = [:]
        for record in records {
            switch record {
            case .sensor(let sensor):
                if sensors[sensor.address] == nil { order.append(sensor.address) }
                sensors[sensor.address] = sensor
            case .value(let value):
                if sensors[value.address] == nil, emissions[value.address] == nil { order.append(value.address) }
                let origin = start ?? value.at.monotonic
                start = origin
                if value.kind == .read {
                    reads[value.address, default: [:]][value.characteristic] = value.bytes
                } else {
                    emissions[value.address, default: []].append(
                        PeripheralEmission(
                            characteristic: value.characteristic, value: value.bytes, at: value.at.monotonic - origin,
                            isIndication: value.kind == .indication))
                }
            default:
                continue
            }
        }
        return order.map { address in
            let sensor = sensors[address]
            var values = reads[address] ?? [:]
            func text(_ uuid: BluetoothUUID, _ string: String?) {
                if let string, values[uuid] == nil { values[uuid] = Array(string.utf8) }
            }
            text(.manufacturerNameString, sensor?.manufacturer)
            text(.modelNumberString, sensor?.model)
            text(.serialNumberString, sensor?.serialNumber)
            text(.hardwareRevisionString, sensor?.hardwareRevision)
            text(.firmwareRevisionString, sensor?.firmwareRevision)
            text(.softwareRevisionString, sensor?.softwareRevision)
            if let location = sensor?.bodySensorLocation, values[.bodySensorLocation] == nil {
                values[.bodySensorLocation] = [location]
            }
            if let location = sensor?.sensorLocation, values[.sensorLocation] == nil {
                values[.sensorLocation] = [location]
            }
            let sent = emissions[address] ?? []
            let services = Set(sent.map { RecordedPeripheral.serviceUUID(of: $0.characteristic) })
            return RecordedPeripheral(
                identity: PeripheralIdentity(
                    address: address, name: sensor?.name ?? "Recorded \(address.suffix(5))",
                    advertisedServices: services.sorted { $0.description < $1.description }),
                emissions: sent, values: values)
        }
    }
}
