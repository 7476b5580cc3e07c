import Dispatch
import Foundation
import Health
import HealthWeb

/// `wearhouse web`: the Health app, a local web app over the store (Sources/WearhouseCLI/WebApp.swift).
struct WebCommand: Command {
    let name = "web"
    let abstract = "Serve the Health app (summary, charts, add and delete data, grants) on 127.0.0.1."
    var discussion: String {
        """
        Prints a URL with a one-time login token (http://127.0.0.1:8710/?token=...): opening it sets a session
        cookie, and the token is not accepted again. Only loopback addresses and Unix sockets are served (TLS for
        other addresses is not built yet, so they are refused). Under systemd socket activation (LISTEN_FDS) the
        socket systemd passes is used and --listen is ignored. Stops on SIGINT or SIGTERM.

        EXAMPLES:
          wearhouse web --store ~/health.db
          wearhouse web --listen 127.0.0.1:9000 --time-zone Europe/Berlin
          wearhouse web --listen unix:/run/user/1000/wearhouse-web.sock
        """
    }

    struct Options: CommandOptions {
        var listen = "127.0.0.1:8710"
        var timeZone = TimeZone.current
        var stepGoal = 10_000
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .text("listen", value: "addr:port", \.listen, help: "Where to listen: ADDR:PORT (loopback only) or unix:PATH."),
        StoreOptions.timeZone(\.timeZone, help: "IANA zone for days and charts (default: the system's)."),
        .integer("step-goal", in: 1...1_000_000, \.stepGoal, help: "The daily step goal the summary shows."),
        StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let environment = ProcessInfo.processInfo.environment
        let address: ListenAddress
        if let inherited = ListenAddress.fromSystemd(environment: environment) {
            address = inherited
        } else {
            do throws(ListenAddress.Invalid) {
                address = try ListenAddress(parsing: options.listen)
            } catch {
                console.error("--listen: \(error)")
                return .usage
            }
        }
        guard address.isLocal else {
            console.error(
                "--listen \(address): not a loopback address; serving health data to the network needs TLS, "
                    + "which wearhouse web does not support yet (use 127.0.0.1, [::1] or unix:PATH)")
            return .usage
        }
        return await runStoreCommand(console) {
            let store = try StoreLocation.open(store: options.store, mustExist: false)
            let started = ContinuousClock.now
            let box = GateBox()
            let app = WebApp(
                store: store, timeZone: options.timeZone, stepGoal: options.stepGoal, gate: { box.gate })
            let server: HTTPServer
            do {
                server = try HTTPServer(listen: address) { request in await app.handle(request) }
            } catch {
                console.error("\(error)")
                return .unavailable
            }
            let gate = SessionGate(hosts: SessionGate.hosts(for: server.address)) {
                let elapsed = ContinuousClock.now - started
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            }
            box.gate = gate
            switch server.address {
            case .tcp:
                console.out("http://\(server.address)/?token=\(gate.loginToken)\n")
            default:
                console.out("listening on \(server.address); log in with /?token=\(gate.loginToken)\n")
            }
            let signal = await Self.waitForSignal()
            server.stop()
            console.err("wearhouse web: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))\n")
            return .success
        }
    }

    /// Waits for SIGINT or SIGTERM (their default actions are turned off meanwhile, then restored).
    static func waitForSignal() async -> Int32 {
        let queue = DispatchQueue(label: "wearhouse.web.signals")
        let previous = (Glibc.signal(SIGINT, SIG_IGN), Glibc.signal(SIGTERM, SIG_IGN))
        defer {
            Glibc.signal(SIGINT, previous.0)
            Glibc.signal(SIGTERM, previous.1)
        }
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
        let received: Int32 = await withCheckedContinuation { continuation in
            let once = OnceFlag()
            for source in sources {
                let number = Int32(source.handle)
                source.setEventHandler {
                    if once.take() { continuation.resume(returning: number) }
                }
                source.resume()
            }
        }
        for source in sources { source.cancel() }
        return received
    }
}

/// The gate is made after the server (it needs the bound port); requests that come before it are refused.
final class GateBox: @unchecked Sendable {
    // @unchecked: `gate` is set once, under the lock, before the URL is printed.
    private let lock = NSLock()
    private var stored: SessionGate?

    var gate: SessionGate? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// True exactly once.
final class OnceFlag: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var taken = false

    func take() -> Bool {
        lock.withLock {
            defer { taken = true }
            return !taken
        }
    }
}
