import BlueZ
import DBus
import Dispatch
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
        registry (sensors enrolled or forgotten meanwhile) and the log level; SIGTERM and SIGINT stop it cleanly:
        notifications stop, managed sensors are disconnected, everything received is written.
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
                throw UsageError("--set: expected section.key=value, not '\(pair)'")
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
            recordOnly: recordOnly
        ).run(console: console)
        await api?.stop()
        return status
    }
}

/// One run of the service, from connecting to the last flush.
private struct Service {
    let configuration: GatewayConfiguration
    let store: any HealthStoreEngine
    let log: ServiceLog
    let duration: Duration?
    let recorder: TraceRecorder?
    let recordOnly: Set<String>?
    let notifier = ServiceNotifier()

    func run(console: Console) async -> ExitCode {
        let signals = SignalStream([SIGTERM, SIGINT, SIGHUP])
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
        let writer = StoreWriter(
            sink: recordOnly == nil ? HealthStoreSink(store: store) : DiscardingSink(),
            settings: .init(
                batchSize: configuration.writer.batchSize, flushInterval: configuration.writer.flushInterval,
                capacity: configuration.writer.queueCapacity))
        let notifier = self.notifier
        let service = GatewayService(
            central: central, registry: recordOnly.map { RecordingRegistry(store, only: $0) } ?? store, writer: writer,
            settings: settings, log: log, status: { notifier.status($0) }, observer: recorder)
        recorder?.start()
        do {
            try await service.start()
        } catch {
            log.error("cannot read the sensor registry: \(error)")
            await central.shutdown(disconnecting: [])
            await bus.close()
            return .ioError
        }
        if !(await central.cache.isAvailable) { log.warning("bluetoothd is not on \(address) yet; waiting for it") }
        notifier.ready(status: "started")
        let watchdog = Task {
            guard let interval = ServiceNotifier.watchdogPingInterval() else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                // Ping only while the service's actor answers: a wedged service gets restarted.
                _ = await service.statuses()
                notifier.watchdog()
            }
        }
        let deadline = duration.map { wait in Task { _ = try? await Task.sleep(for: wait) } }
        let stopReason = await waitForStop(signals: signals, deadline: deadline, service: service)
        log.notice("stopping (\(stopReason))")
        notifier.stopping(status: "stopping: \(stopReason)")
        watchdog.cancel()
        await service.stop()
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

    /// Waits for SIGTERM/SIGINT or the deadline; SIGHUP reloads and goes on waiting.
    private func waitForStop(signals: SignalStream, deadline: Task<Void, Never>?, service: GatewayService) async
        -> String
    {
        let stream = signals.stream
        let ended = Task {
            await deadline?.value
            if deadline != nil { signals.finish(with: -1) }
        }
        defer { ended.cancel() }
        for await signal in stream {
            switch signal {
            case SIGHUP:
                notifier.reloading(status: "reloading")
                let path = GatewayConfiguration.defaultPath
                if let reloaded = try? GatewayConfiguration.load(path: path) {
                    log.level = reloaded.service.logLevel
                }
                do {
                    try await service.reloadRegistry()
                    log.notice("registry reloaded")
                } catch {
                    log.error("cannot reload the registry: \(error)")
                }
                notifier.ready(status: "reloaded")
            case -1:
                return "--duration passed"
            default:
                return signal == SIGINT ? "SIGINT" : "SIGTERM"
            }
        }
        return "signal stream ended"
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

/// Signals delivered as an async stream (the default actions are turned off while it lives).
///
/// `@unchecked Sendable`: the dispatch sources are created in `init` and only cancelled in `deinit`.
final class SignalStream: @unchecked Sendable {
    let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let sources: [any DispatchSourceSignal]

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        self.continuation = continuation
        sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// Ends the wait with a pseudo-signal.
    func finish(with value: Int32) {
        continuation.yield(value)
    }

    deinit {
        for source in sources { source.cancel() }
        continuation.finish()
    }
}
