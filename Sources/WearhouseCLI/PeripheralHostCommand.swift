import DBus
import FakeDevices
import Foundation
import GATT

/// `wearhouse peripheral-host`: serves one simulated sensor through a real bluetoothd (its GATT server and
/// advertising API) on one adapter, for the BlueZ VM rig (Tests/BlueZVM, docs/bluez-vm.md). A subcommand rather
/// than an executable of its own: the rig runs the wearhouse binary the tests already built, and FakeDevices is
/// linked into it already (`fake-bluez`).
struct PeripheralHostCommand: Command {
    let name = "peripheral-host"
    let abstract = "Serve a simulated sensor through a real bluetoothd on one adapter (test rig)."
    var discussion: String {
        """
        The sensor is the scenario file's peripheral (the JSON of 'wearhouse fake-bluez'; its address is not
        used: the sensor has the adapter's), or one of the given kind. Its services become a GATT application
        (GattManager1.RegisterApplication) and its advertisement an LEAdvertisement1 on the adapter; the
        advertisement is registered again every second while no central is connected. Every value sent to a
        subscribed central is appended to --sent as one JSON line. Prints 'peripheral-host ready <address>'
        once bluetoothd accepted both, and serves until killed or --duration passes; when bluetoothd restarts, or
        the adapter goes away and comes back, it registers again. Errors, registrations and pairing requests are
        logged on standard error as they come. A health device of --kind has its clock set to the local wall time
        (its time stamps are right); while the sensor is paused it is out of contact, so a scale keeps what it
        weighs and sends it when the pause ends.
        """
    }

    struct Options: CommandOptions {
        var adapter = ""
        var bus: DBusAddress = .system
        var kind: FakeBlueZScenario.Kind = .chestStrap
        var scenario: String?
        var peripheral = 0
        var seed = 1
        var summaryInterval: Duration?
        var sent: String?
        var duration: Duration?
        var pauseFile: String?
        var layoutFile: String?
        var agentCapability = "NoInputNoOutput"
    }

    let syntax = CommandSyntax<Options>(options: [
        .text("adapter", value: "hciN", \.adapter, required: true, help: "The adapter to serve on (hci1)."),
        BluetoothOptions.bus(\.bus),
        .choice(
            "kind", value: "kind", \.kind,
            help: "The sensor, when no scenario is given: "
                + FakeBlueZScenario.Kind.allCases.map(\.rawValue).joined(separator: ", ") + "."),
        .text("scenario", value: "file", \.scenario, kind: .path, help: "A scenario file (fake-bluez's JSON)."),
        .integer("peripheral", in: 0...63, \.peripheral, help: "Which of the scenario's peripherals, from 0."),
        .integer("seed", in: 0...Int(Int32.max), \.seed, help: "The simulation's seed, when no scenario is given."),
        .seconds(
            "summary-interval", in: anySeconds, \.summaryInterval,
            help: "How often a scale weighs (a step counter, thermometer, pulse oximeter reports), when no scenario "
                + "is given (default 10)."),
        .text("sent", value: "file", \.sent, kind: .path, help: "Write every value sent here (JSON lines)."),
        .seconds("duration", in: anySeconds, \.duration, help: "Stop after this many seconds."),
        .text(
            "pause-file", value: "file", \.pauseFile, kind: .path,
            help: "Send nothing while this file exists (the sensor lost contact)."),
        .text(
            "layout-file", value: "file", \.layoutFile, kind: .path,
            help: "While this file exists, serve an updated firmware's GATT layout (a service more: handles move)."),
        .text(
            "agent-capability", value: "capability", \.agentCapability,
            help: "The sensor's pairing capability: " + PeripheralHost.agentCapabilities.joined(separator: ", ")
                + " (default NoInputNoOutput; DisplayYesNo confirms a passkey)."),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        // A health device's clock shows local wall time, set right when it is switched on.
        let now = Date()
        var script = PeripheralScript(
            kind: options.kind.scriptKind, address: "00:00:00:00:00:00", seed: UInt64(options.seed),
            summaryInterval: options.summaryInterval ?? .seconds(10),
            clockStart: Int64(now.timeIntervalSince1970) + Int64(TimeZone.current.secondsFromGMT(for: now)))
        if let path = options.scenario {
            let scenario: FakeBlueZScenario
            do {
                scenario = try FakeBlueZScenario(contentsOf: URL(fileURLWithPath: path))
            } catch {
                console.error("cannot read the scenario \(path): \(error)")
                return FileManager.default.fileExists(atPath: path) ? .dataError : .noInput
            }
            guard options.peripheral < scenario.peripherals.count else {
                console.error(
                    "the scenario \(path) has \(scenario.peripherals.count) peripherals, no number \(options.peripheral)"
                )
                return .dataError
            }
            script = scenario.peripherals[options.peripheral].script
        }
        let host: PeripheralHost
        do {
            host = try await PeripheralHost.start(
                on: options.bus, adapter: options.adapter, peripheral: script.makePeripheral(),
                ledgerPath: options.sent,
                agentCapability: options.agentCapability, log: { console.err("peripheral-host: \($0)\n") })
        } catch {
            console.error("cannot serve the sensor on \(options.adapter): \(error)")
            return .unavailable
        }
        await host.setPauseFile(options.pauseFile)
        await host.setLayoutFile(options.layoutFile)
        console.out("peripheral-host ready \(await host.adapterAddress)\n")
        let running = Task { await host.run() }
        if let duration = options.duration {
            try? await Task.sleep(for: duration)
        } else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
        running.cancel()
        _ = await running.value
        await host.stop()
        return .success
    }
}
