import BlueZ
import DBus
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import StoreEngine
import Support
import Traces

/// `wearhouse run`: the service. Reads the config, connects to bluetoothd, streams every enrolled sensor into
/// the store until SIGTERM (or `--duration`); SIGHUP reloads the registry and the log level.
struct RunCommand: Command {
    let name = "run"
    let abstract = "Run the gateway service: every enrolled sensor's samples into the store, until stopped."
    var discussion: String {
        """
        The configuration is \(GatewayConfiguration.defaultPath) (INI; every key and its default in
        Systemd/wearhouse.conf.example); command-line options override it, and --set overrides any key, e.g.
        --set writer.batch-size=200,bluetooth.watchdog=20. Under systemd (Type=notify) it reports READY, STATUS,
        WATCHDOG and STOPPING; it logs to the journal there and to stderr in a terminal. SIGHUP re-reads the
        registry (sensors enrolled or forgotten meanwhile) and the log level from the configuration it was started
        with; SIGTERM and SIGINT stop it cleanly: notifications stop, managed sensors are disconnected, everything
        received is written. A second SIGTERM or SIGINT, or a stop longer than service.stop-timeout, exits at once
        (status 128 + the signal, or 70).
        """
    }

    struct Options: CommandOptions {
        var config: String?
        var store: String?
        var bus: String?
        var adapter: String?
        /// `--set`: configuration keys (`section.key`) and their values, in the order given.
        var overrides: [(key: String, value: String)]?
        var duration: Duration?
        var api: AppAPI.Bus?
        var record: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        RunCommand.config(
            \.config, help: "The configuration file (default \(GatewayConfiguration.defaultPath), if present)."),
        StoreOptions.store(\.store), BluetoothOptions.bus(\.bus), BluetoothOptions.adapter(\.adapter),
        RunCommand.overrides(\.overrides),
        .seconds("duration", in: anySeconds, \.duration, help: "Stop after this many seconds (tests, demos)."),
        AppAPI.option(\.api),
        .text(
            "record", value: "file", \.record, kind: .path,
            help: "Also record every notification into this trace file (appended to when it exists)."),
    ])

    /// `--config <file>`, shared with `wearhouse record`.
    static func config<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, String?> & Sendable, help: String
    ) -> Option<Options> {
        .text("config", value: "file", path, kind: .path, help: help)
    }

    /// `--set <key=value,...>`, shared with `wearhouse record`.
    static func overrides<Options: CommandOptions>(
        _ path: any WritableKeyPath<Options, [(key: String, value: String)]?> & Sendable
    ) -> Option<Options> {
        .list(
            "set", value: "key=value,...", path,
            help: "Override configuration keys (section.key=value), comma-separated or repeated."
        ) { pair throws(UsageError) in
            guard let equals = pair.firstIndex(of: "=") else {
                throw UsageError("--set: expected section.key=value, not \(echo(pair))")
            }
            return (key: String(pair[..<equals]), value: String(pair[pair.index(after: equals)...]))
        }
    }

    func run(_ options: Options, console: Console) async -> ExitCode {
        await run(options, console: console, recordOnly: nil)
    }

    /// `recordOnly` (`wearhouse record`): serve only these sensors (all when empty), store nothing, write no
    /// statuses; the trace is everything.
    func run(_ options: Options, console: Console, recordOnly: Set<String>?) async -> ExitCode {
        var configuration: GatewayConfiguration
        var overrides: [String: String] = [:]
        do {
            let path = options.config ?? GatewayConfiguration.defaultPath
            configuration = try GatewayConfiguration.load(path: path, required: options.config != nil)
            for (key, value) in options.overrides ?? [] { overrides[key] = value }
            if let bus = options.bus { overrides["bluetooth.bus"] = bus }
            if let adapter = options.adapter { overrides["bluetooth.adapter"] = adapter }
            configuration = try configuration.applying(overrides: overrides)
        } catch {
            console.error("\(error)")
            return .dataError
        }
        let duration = options.duration
        var storeURL = options.store
        if storeURL == nil, ProcessInfo.processInfo.environment["WEARHOUSE_STORE"] == nil,
            FileManager.default.fileExists(atPath: options.config ?? GatewayConfiguration.defaultPath)
                || getuid() == 0
        {
            storeURL = configuration.store.url
        }
        let store: any HealthStoreEngine
        do throws(StoreLocation.Failure) {
            store = try StoreLocation.open(store: storeURL, mustExist: false)
        } catch {
            console.error(error.message)
            return error.code
        }
        let log = ServiceLog(level: configuration.service.logLevel, destination: .automatic())
        var recorder: TraceRecorder?
        if let path = options.record {
            do throws(TraceError) {
                recorder = try TraceRecorder(
                    path: path, recorder: "wearhouse \(WearhouseCLI.version)",
                    samples: .init(seriesWindow: configuration.samples.heartbeatSeriesWindow))
            } catch {
                console.error("cannot record: \(error)")
                return .ioError
            }
        }
        // Recording alone (wearhouse record) serves no app API.
        var api: AppAPI?
        if recordOnly == nil {
            guard let started = await AppAPI.start(options.api, store: storeURL, log: log) else {
                return .unavailable
            }
            api = started
        }
        let status = await Service(
            configuration: configuration, store: store, log: log, duration: duration, recorder: recorder,
            recordOnly: recordOnly, configurationFile: options.config, overrides: overrides
        ).run(console: console)
        await api?.stop()
        return status
    }
}

/// One run of the service: the parts built and handed to ``ServiceLifecycle`` (signals, sd_notify, the stop).
private struct Service {
    let configuration: GatewayConfiguration
    let store: any HealthStoreEngine
    let log: ServiceLog
    let duration: Duration?
    let recorder: TraceRecorder?
    let recordOnly: Set<String>?
    /// `--config`, reloaded on SIGHUP (the default path when `nil`).
    let configurationFile: String?
    let overrides: [String: String]
    let notifier = ServiceNotifier()

    func run(console: Console) async -> ExitCode {
        let address = configuration.bluetooth.bus
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: address)
        } catch {
            log.error("cannot connect to the D-Bus \(address): \(error)")
            notifier.send([.status("cannot connect to the D-Bus \(address)"), .errno(69)])
            return .unavailable
        }
        let central: BlueZCentral
        do {
            central = try await BlueZCentral.start(on: bus)
        } catch {
            log.error("cannot watch org.bluez on \(address): \(error)")
            await bus.close()
            return .unavailable
        }
        if !(await central.cache.isAvailable) { log.warning("bluetoothd is not on \(address) yet; waiting for it") }
        let clock = SystemClock()
        let writer = StoreWriter(
            sink: recordOnly == nil ? HealthStoreSink(store: store) : DiscardingSink(),
            settings: .init(
                batchSize: configuration.writer.batchSize, flushInterval: configuration.writer.flushInterval,
                capacity: configuration.writer.queueCapacity),
            clock: clock)
        let notifier = self.notifier
        let recordOnly = self.recordOnly
        let log = self.log
        if recordOnly == nil { await applyPriorities(configuration, to: store, log: log) }
        // The service applies the store's retention (`store retention`) daily; recording alone leaves the store be.
        let store = self.store
        let prune: (@Sendable () async throws -> Int)? =
            recordOnly == nil ? { @Sendable in try await store.prune() } : nil
        let service = GatewayService(
            central: central, registry: recordOnly.map { RecordingRegistry(store, only: $0) } ?? store, writer: writer,
            settings: settings, log: log, clock: clock, status: { notifier.status($0) }, observer: recorder,
            prune: prune)
        let path = configurationFile ?? GatewayConfiguration.defaultPath
        let required = configurationFile != nil
        let overrides = self.overrides
        let lifecycle = ServiceLifecycle(
            settings: .init(stopTimeout: configuration.service.stopTimeout, duration: duration), log: log,
            notifier: notifier, clock: clock,
            reload: {
                let reloaded = await service.reload(configurationAt: path, required: required, overrides: overrides)
                if let reloaded, recordOnly == nil { await applyPriorities(reloaded, to: store, log: log) }
            },
            alive: { _ = await service.statuses() })
        let outcome = await lifecycle.run((recorder.map { [$0] } ?? []) + [service])
        await central.shutdown(disconnecting: [])
        await bus.close()
        if let recorder {
            do throws(TraceError) {
                try recorder.close()
                log.notice("recorded \(recorder.notifications) notifications into \(recorder.path)")
            } catch {
                log.error("the recording stopped: \(error)")
            }
        }
        switch outcome {
        case .stopped:
            break
        case .failed(let message):
            log.error("cannot read the sensor registry: \(message)")
            return .ioError
        case .stopTimedOut, .escalated:
            return ExitCode(outcome.exitStatus)
        }
        guard recordOnly == nil else { return .success }
        let counters = await writer.counters
        log.notice(
            "wrote \(counters.inserted) samples (\(counters.duplicates) duplicates, \(counters.rejected) rejected)")
        let latencies = await writer.latencies
        if let p50 = latencies.percentile(50), let p99 = latencies.percentile(99) {
            let summary = "p50 \(Double(p50) / 1000) ms, p99 \(Double(p99) / 1000) ms over \(latencies.count) samples"
            log.notice("notification-to-durable latency \(summary)")
        }
        return .success
    }

    var settings: GatewayService.Settings {
        let bluetooth = configuration.bluetooth
        return GatewayService.Settings(
            source: Source(identifier: configuration.service.sourceName, version: WearhouseCLI.version),
            adapter: bluetooth.adapter, connectTimeout: bluetooth.connectTimeout,
            notifyMode: bluetooth.notifyMode == .acquired ? .acquired : .properties,
            session: .init(watchdog: bluetooth.watchdog), backoffMinimum: bluetooth.backoffMinimum,
            backoffMaximum: bluetooth.backoffMaximum,
            samples: .init(seriesWindow: configuration.samples.heartbeatSeriesWindow),
            timeZone: configuration.samples.timeZone ?? .current,
            statusInterval: configuration.service.statusInterval)
    }
}

/// Sets the configuration's `[priority]` lists in the store (at start and on every reload); a list the store
/// refuses is logged and the others are still set.
private func applyPriorities(_ configuration: GatewayConfiguration, to store: any HealthStoreEngine, log: ServiceLog)
    async
{
    for (key, priority) in configuration.priorities.sorted(by: { $0.key < $1.key }) {
        let name = key == defaultPriorityKey ? "default" : key
        let type = HealthTypeCatalog.type(key)
        guard type != nil || key == defaultPriorityKey else { continue }
        do {
            try await store.setPriority(of: type, priority)
            log.info("priority of \(name): \(priority)")
        } catch {
            log.error("cannot set the priority of \(name) in the store: \(error)")
        }
    }
}
