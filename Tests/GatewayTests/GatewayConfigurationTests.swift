import DBus
import Foundation
import Gateway
import Support
import Testing

@Suite struct GatewayConfigurationTests {
    @Test func defaults() {
        let configuration = GatewayConfiguration()
        #expect(configuration.store.url == "/var/lib/wearhouse/health.db")
        #expect(configuration.bluetooth.adapter == nil)
        #expect(configuration.bluetooth.bus == .system)
        #expect(configuration.bluetooth.connectTimeout == .seconds(40))
        #expect(configuration.bluetooth.watchdog == .seconds(15))
        #expect(configuration.bluetooth.backoffMinimum == .milliseconds(250))
        #expect(configuration.bluetooth.backoffMaximum == .seconds(60))
        #expect(configuration.bluetooth.notifyMode == .properties)
        #expect(configuration.writer.batchSize == 500)
        #expect(configuration.writer.flushInterval == .milliseconds(250))
        #expect(configuration.writer.queueCapacity == 100_000)
        #expect(configuration.samples.heartbeatSeriesWindow == .seconds(60))
        #expect(configuration.samples.timeZone == nil)
        #expect(configuration.service.logLevel == .info)
        #expect(configuration.service.statusInterval == .seconds(10))
        #expect(configuration.service.sourceName == "wearhouse")
    }

    @Test func parsesEveryKey() throws {
        let text = """
            # comment
            ; another comment
            [store]
            url = sqlite:/srv/health.db

            [bluetooth]
            adapter = 00:1a:7d:da:71:13
            bus = unix:path=/tmp/bus
            connect-timeout = 20
            watchdog = 30
            backoff-min = 0.5
            backoff-max = 120
            notify-mode = acquired
            [writer]
            batch-size=100
            flush-interval =  100
            queue-capacity = 5000
            [samples]
            heartbeat-series-window = 30
            time-zone = Europe/Berlin
            [service]
            log-level = debug
            status-interval = 5
            source-name = treadmill # gateway
            """
        let configuration = try GatewayConfiguration(parsing: text, file: "wearhouse.conf")
        #expect(configuration.store.url == "sqlite:/srv/health.db")
        #expect(configuration.bluetooth.adapter == "00:1A:7D:DA:71:13")
        #expect(configuration.bluetooth.bus == .address("unix:path=/tmp/bus"))
        #expect(configuration.bluetooth.connectTimeout == .seconds(20))
        #expect(configuration.bluetooth.watchdog == .seconds(30))
        #expect(configuration.bluetooth.backoffMinimum == .milliseconds(500))
        #expect(configuration.bluetooth.backoffMaximum == .seconds(120))
        #expect(configuration.bluetooth.notifyMode == .acquired)
        #expect(configuration.writer.batchSize == 100)
        #expect(configuration.writer.flushInterval == .milliseconds(100))
        #expect(configuration.writer.queueCapacity == 5000)
        #expect(configuration.samples.heartbeatSeriesWindow == .seconds(30))
        #expect(configuration.samples.timeZone?.identifier == "Europe/Berlin")
        #expect(configuration.service.logLevel == .debug)
        #expect(configuration.service.statusInterval == .seconds(5))
        // No trailing comments: a '#' belongs to the value.
        #expect(configuration.service.sourceName == "treadmill # gateway")
        // The INI text of a configuration parses back to it.
        #expect(try GatewayConfiguration(parsing: configuration.iniText, file: "x") == configuration)
        #expect(try GatewayConfiguration(parsing: GatewayConfiguration().iniText, file: "x") == GatewayConfiguration())
    }

    @Test(arguments: [
        (
            "[writer]\nbatchsize = 5",
            "wearhouse.conf:2: unknown key 'batchsize' in [writer] (did you mean 'batch-size'?)"
        ),
        ("[writer]\n\nbatch-sizes = 5", "wearhouse.conf:3: unknown key 'batch-sizes' in [writer]"),
        (
            "[store]\nurl = a\n[sensors]\nx = 1",
            "wearhouse.conf:3: unknown section [sensors]; known: [store], [bluetooth], [writer], [samples], [service], [priority]"
        ),
        ("url = a", "wearhouse.conf:1: key 'url' before any [section]"),
        ("[store]\nurl", "wearhouse.conf:2: expected 'key = value', got 'url'"),
        ("[store\n", "wearhouse.conf:1: malformed section header '[store'"),
        ("[store]\n= x", "wearhouse.conf:2: missing key before '='"),
        ("[store]\nurl = a\nurl = b", "wearhouse.conf:3: duplicate key 'url' in [store] (first on line 2)"),
        (
            "[store]\nurl =",
            "wearhouse.conf:2: invalid url '' in [store]: expected a path, sqlite:PATH or postgresql://..."
        ),
        (
            "[writer]\nbatch-size = 0",
            "wearhouse.conf:2: invalid batch-size '0' in [writer]: expected a whole number from 1 to 100000"
        ),
        (
            "[writer]\nflush-interval = 1500",
            "wearhouse.conf:2: invalid flush-interval '1500' in [writer]: "
                + "expected milliseconds from 1 to 1000 (a sample is durable within a second)"
        ),
        (
            "[bluetooth]\nwatchdog = 0.5",
            "wearhouse.conf:2: invalid watchdog '0.5' in [bluetooth]: expected seconds from 1 to 3600"
        ),
        (
            "[bluetooth]\nbackoff-min = nan",
            "wearhouse.conf:2: invalid backoff-min 'nan' in [bluetooth]: expected seconds from 0.01 to 3600"
        ),
        (
            "[bluetooth]\nadapter = hci0",
            "wearhouse.conf:2: invalid adapter 'hci0' in [bluetooth]: "
                + "expected an adapter address such as 00:1A:7D:DA:71:13, or nothing"
        ),
        (
            "[bluetooth]\nnotify-mode = poll",
            "wearhouse.conf:2: invalid notify-mode 'poll' in [bluetooth]: expected properties or acquired"
        ),
        (
            "[bluetooth]\nbus = /run/dbus/system_bus_socket",
            "wearhouse.conf:2: invalid bus '/run/dbus/system_bus_socket' in [bluetooth]: "
                + "expected a D-Bus address such as unix:path=/run/dbus/system_bus_socket, or nothing"
        ),
        (
            "[service]\nlog-level = verbose",
            "wearhouse.conf:2: invalid log-level 'verbose' in [service]: "
                + "expected debug, info, notice, warning, error, critical"
        ),
        (
            "[samples]\ntime-zone = Mars/Olympus",
            "wearhouse.conf:2: invalid time-zone 'Mars/Olympus' in [samples]: "
                + "expected an IANA time zone such as Europe/Berlin, or nothing for the system's"
        ),
        (
            "[bluetooth]\nbackoff-max = 10\nbackoff-min = 20",
            "wearhouse.conf:2: backoff-min (20) is above backoff-max (10) in [bluetooth]"
        ),
        (
            "[writer]\nbatch-size = 5000\nqueue-capacity = 1000",
            "wearhouse.conf:3: batch-size (5000) is above queue-capacity (1000) in [writer]"
        ),
    ])
    func errorsNameFileLineAndKey(text: String, expected: String) {
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration(parsing: text, file: "wearhouse.conf") }
        do {
            _ = try GatewayConfiguration(parsing: text, file: "wearhouse.conf")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func overrides() throws {
        let base = try GatewayConfiguration(parsing: "[writer]\nbatch-size = 100\n", file: "wearhouse.conf")
        let configuration = try base.applying(overrides: [
            "writer.batch-size": "200", "bluetooth.adapter": "", "service.log-level": " warning ",
            "store.url": "/tmp/x.db",
        ])
        #expect(configuration.writer.batchSize == 200)
        #expect(configuration.service.logLevel == .warning)
        #expect(configuration.store.url == "/tmp/x.db")
        #expect(configuration.value(forKey: "writer.batch-size") == "200")
        #expect(configuration.value(forKey: "bluetooth.backoff-min") == "0.25")
        #expect(configuration.value(forKey: "writer.flush-interval") == "250")
        #expect(configuration.value(forKey: "writer.nope") == nil)
        #expect(try base.applying(overrides: [:]) == base)

        func failure(_ overrides: [String: String]) -> String? {
            do {
                _ = try base.applying(overrides: overrides)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            failure(["writer.batchsize": "1"])
                == "override writer.batchsize: unknown key 'batchsize' in [writer] (did you mean 'batch-size'?)")
        #expect(failure(["sensors.x": "1"]) == "override sensors.x: unknown section [sensors]")
        #expect(failure(["batch-size": "1"]) == "override batch-size: expected section.key, such as writer.batch-size")
        #expect(failure(["writer.": "1"]) == "override writer.: expected section.key, such as writer.batch-size")
        #expect(failure(["writer.queue-capacity": "1000"]) == nil)
        #expect(try base.applying(overrides: ["bluetooth.bus": "session"]).bluetooth.bus == .session)
        #expect(try base.applying(overrides: ["bluetooth.bus": "system"]).bluetooth.bus == .system)
        #expect(
            failure(["writer.batch-size": "5000", "writer.queue-capacity": "1000"])
                == "override writer.queue-capacity: batch-size (5000) is above queue-capacity (1000) in [writer]")
    }

    @Test func loadsFilesAndDefaultsWhenMissing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-conf-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.conf").path
        #expect(try GatewayConfiguration.load(path: missing) == GatewayConfiguration())
        #expect(throws: ConfigurationError(location: missing, message: "no such file")) {
            try GatewayConfiguration.load(path: missing, required: true)
        }
        let file = directory.appendingPathComponent("wearhouse.conf")
        try "[service]\nsource-name = lab\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try GatewayConfiguration.load(path: file.path).service.sourceName == "lab")
    }

    /// The example file documents every key with its default: uncommenting every `#key = value` line gives
    /// the defaults, and no key is missing.
    @Test func exampleFileDocumentsEveryKeyWithItsDefault() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(
            contentsOf: root.appendingPathComponent("Systemd/wearhouse.conf.example"), encoding: .utf8)
        // The file as shipped parses (everything commented out).
        #expect(try GatewayConfiguration(parsing: example, file: "example") == GatewayConfiguration())
        var uncommented: [String] = []
        var documented: [String] = []
        var section = ""
        for line in example.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("[") { section = String(line.dropFirst().dropLast()) }
            if line.hasPrefix("#"), let equals = line.firstIndex(of: "="), !line.contains(" is "),
                line.dropFirst().first?.isLetter == true
            {
                uncommented.append(String(line.dropFirst()))
                documented.append(section + "." + line.dropFirst()[..<equals].trimmingCharacters(in: .whitespaces))
            } else {
                uncommented.append(String(line))
            }
        }
        #expect(documented == GatewayConfiguration.keyNames)
        let parsed = try GatewayConfiguration(parsing: uncommented.joined(separator: "\n"), file: "example")
        #expect(parsed == GatewayConfiguration())
    }
}
