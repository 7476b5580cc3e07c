import Health

/// `wearhouse record --out FILE`: the service's connections and subscriptions, with a trace as the only output.
struct RecordCommand: Command {
    let name = "record"
    let abstract = "Record what enrolled sensors send into a trace file, storing nothing."
    var discussion: String {
        """
        Runs the gateway service exactly as 'wearhouse run' does (same configuration, same connection and
        subscription logic) over the enrolled sensors, or only those given with --sensor, but with a sink that
        stores nothing and without writing sensor statuses: the trace is the whole output. The store is read for
        the registry of enrolled sensors only. Stop it with SIGINT/SIGTERM or --duration. Do not run it while the
        service runs (both would want the same sensors); to record while serving, use 'wearhouse run --record'.
        An existing trace is appended to (a new session). Replay it with 'wearhouse replay'.
        """
    }

    struct Options: CommandOptions {
        var out = ""
        var sensors: [String]?
        /// Everything else is `wearhouse run`'s.
        var run = RunCommand.Options()
    }

    let syntax = CommandSyntax<Options>(
        options: [
            .text(
                "out", value: "file", \.out, kind: .path, required: true,
                help: "The trace file to write (appended to when it exists)."),
            .seconds("duration", in: anySeconds, \.run.duration, help: "Stop after this many seconds."),
            .list(
                "sensor", value: "address,...", \.sensors,
                help: "Record only these enrolled sensors (comma-separated)."),
            BluetoothOptions.bus(\.run.bus), BluetoothOptions.adapter(\.run.adapter), StoreOptions.store(\.run.store),
            RunCommand.config(\.run.config, help: "The configuration file."), RunCommand.overrides(\.run.overrides),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        var sensors = Set<String>()
        for text in options.sensors ?? [] {
            guard let address = RegisteredSensor.normalizedAddress(text) else {
                console.error("--sensor: \(echo(text)) is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
                return .usage
            }
            sensors.insert(address)
        }
        if !sensors.isEmpty {
            // A sensor that is not enrolled would be waited for, silently, for the whole duration.
            let enrolled: Set<String>
            do {
                let store = try StoreLocation.open(store: options.run.store, mustExist: true)
                enrolled = Set(try await store.registeredSensors().map(\.address))
            } catch let failure as StoreLocation.Failure {
                console.error(failure.message)
                return failure.code
            } catch {
                console.error("cannot read the enrolled sensors: \(error)")
                return .ioError
            }
            let missing = sensors.subtracting(enrolled).sorted()
            guard missing.isEmpty else {
                console.error(
                    "--sensor: \(missing.joined(separator: ", ")) \(missing.count == 1 ? "is" : "are") not enrolled "
                        + "(see 'wearhouse sensors'; enrol with 'wearhouse pair')")
                return .noInput
            }
        }
        var run = options.run
        run.record = options.out
        return await RunCommand().run(run, console: console, recordOnly: sensors)
    }
}
