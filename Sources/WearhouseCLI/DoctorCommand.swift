import DBus
import GATT
import Gateway

/// `wearhouse doctor`: what to check first when no samples arrive, and what to fix.
struct DoctorCommand: Command {
    let name = "doctor"
    let abstract = "Check bluetoothd, adapters, the kernel, the store and permissions, and say what to fix."
    let discussion = """
        Checks, in order: the configuration file; bluetoothd on the bus (org.bluez owned) and its adapters
        (powered, able to act as an LE central); rfkill switches; the controllers udev lists (bus, vendor,
        product, driver); when bluetoothd does not answer, the controllers themselves over HCI, or that the
        kernel has no Bluetooth at all; the store (there, a SQLite database, writable, owner); and whether this
        user and the service's user may talk to bluetoothd.

        Each line is ok, warning or error, with what to do about it. Exits 0 when nothing is an error, 69 when
        something is.
        """

    struct Options: CommandOptions {
        var json = false
        var bus: DBusAddress?
        var store: String?
        var config = GatewayConfiguration.defaultPath
    }

    let syntax = CommandSyntax<Options>(options: [
        .flag("json", \.json, help: "Print one JSON object per finding."),
        .value(
            "bus", value: "address", \.bus,
            help: "The D-Bus address where bluetoothd is (default: the configuration's, else the system bus)."
        ) { text throws(UsageError) in
            do {
                return try GatewayConfiguration().applying(overrides: ["bluetooth.bus": text]).bluetooth.bus
            } catch {
                throw UsageError("--bus: \(echo(text)) is not a D-Bus address (unix:path=..., system or session)")
            }
        },
        .value(
            "store", value: "url", \.store,
            help: "The store to check (default: the configuration's, /var/lib/wearhouse/health.db)."
        ) { text throws(UsageError) in
            guard !text.isEmpty else { throw UsageError("--store: empty store URL") }
            return text
        },
        .text("config", value: "file", \.config, kind: .path, help: "The service configuration."),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        var doctor = Doctor(configurationPath: options.config)
        if let bus = options.bus { doctor.bus = bus }
        if let store = options.store { doctor.storeURL = store }
        let findings = await doctor.run()
        if options.json {
            for finding in findings {
                let fields = [
                    Field("check", .string(finding.check)), Field("status", .string(finding.severity.rawValue)),
                    Field("summary", .string(finding.summary)), Field("fix", finding.fix.map { .string($0) } ?? .null),
                ]
                console.out(FieldValue.object(fields).json + "\n")
            }
        } else {
            let width = (findings.map(\.check.count).max() ?? 0) + 2
            for finding in findings {
                console.out(
                    finding.severity.rawValue.padding(to: 9) + finding.check.padding(to: width) + finding.summary + "\n"
                )
                if let fix = finding.fix {
                    console.out(String(repeating: " ", count: 9 + width) + "fix: " + fix + "\n")
                }
            }
            let errors = findings.filter { $0.severity == .error }.count
            let warnings = findings.filter { $0.severity == .warning }.count
            console.out(
                "\n\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")\n")
        }
        return findings.contains { $0.severity == .error } ? .unavailable : .success
    }
}
