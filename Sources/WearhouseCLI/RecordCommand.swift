import Foundation

/// `wearhouse record --out FILE`: the service's connections and subscriptions, with a trace as the only output.
struct RecordCommand: Command {
    let name = "record"
    let abstract = "Record what enrolled sensors send into a trace file, storing nothing."
    let usage =
        "--out <file> [--duration <seconds>] [--sensor <address,...>] [--bus <address>] [--store <url>] "
        + "[--config <file>] [--set <key=value,...>]"
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
    let options = OptionTable(valued: [
        ("out", "file", "The trace file to write (appended to when it exists)."),
        ("duration", "seconds", "Stop after this many seconds."),
        ("sensor", "address,...", "Record only these enrolled sensors (comma-separated)."),
        BluetoothOptions.bus, BluetoothOptions.adapter, StoreLocation.option,
        ("config", "file", "The configuration file."),
        ("set", "key=value,...", "Override configuration keys."),
    ])

    func run(_ arguments: Arguments, console: Console) async -> ExitCode {
        guard let out = arguments.option("out") else {
            console.error("give --out <file>", hint: "Usage: wearhouse record \(usage)")
            return .usage
        }
        guard arguments.positionals.isEmpty else {
            console.error("unexpected argument '\(arguments.positionals[0])'")
            return .usage
        }
        let sensors = Set(
            (arguments.option("sensor") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).uppercased()
            })
        var forwarded = arguments
        forwarded.options["out"] = nil
        forwarded.options["sensor"] = nil
        forwarded.options["record"] = out
        return await RunCommand().run(forwarded, console: console, recordOnly: sensors)
    }
}
