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
        cookie, and the token is not accepted again. Loopback addresses and Unix sockets are served as they are;
        any other address (a LAN) needs HTTPS (--tls-cert and --tls-key, PEM files) and a password
        (--password-file, holding the hash that --hash-password prints), and is refused without them. With a
        password, /login asks for it (5 tries, then one every 5 seconds). Under systemd socket activation
        (LISTEN_FDS) the socket systemd passes is used and --listen is ignored. Stops on SIGINT or SIGTERM.

        EXAMPLES:
          wearhouse web --store ~/health.db
          wearhouse web --listen 127.0.0.1:9000 --time-zone Europe/Berlin
          wearhouse web --listen unix:/run/user/1000/wearhouse-web.sock
          wearhouse web --hash-password > ~/.config/wearhouse-web.password
          wearhouse web --listen 192.168.1.5:8710 --tls-cert cert.pem --tls-key key.pem \\
              --password-file ~/.config/wearhouse-web.password
        """
    }

    struct Options: CommandOptions {
        var listen = "127.0.0.1:8710"
        var timeZone = TimeZone.current
        var stepGoal = 10_000
        var store: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var passwordFile: String?
        var hashPassword = false
    }

    /// The most a certificate, key or password file may hold.
    static let maximumFileBytes = 1 << 20

    let syntax = CommandSyntax<Options>(options: [
        .text(
            "listen", value: "addr:port", \.listen,
            help: "Where to listen: ADDR:PORT or unix:PATH (other than loopback: with TLS and a password)."),
        .text("tls-cert", value: "path", \.tlsCertificate, kind: .path, help: "Serve HTTPS: the certificate (PEM)."),
        .text("tls-key", value: "path", \.tlsKey, kind: .path, help: "The certificate's private key (PEM)."),
        .text(
            "password-file", value: "path", \.passwordFile, kind: .path,
            help: "Ask for a password: the file holds its hash (--hash-password)."),
        .flag("hash-password", \.hashPassword, help: "Read a password on stdin, print its hash for --password-file."),
        StoreOptions.timeZone(\.timeZone, help: "IANA zone for days and charts (default: the system's)."),
        .integer("step-goal", in: 1...1_000_000, \.stepGoal, help: "The daily step goal the summary shows."),
        StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        if options.hashPassword {
            guard let line = readLine(strippingNewline: true) else {
                console.error("--hash-password: no password on stdin")
                return .usage
            }
            do throws(PasswordHash.Invalid) {
                console.out("\(try PasswordHash(password: line))\n")
                return .success
            } catch {
                console.error("--hash-password: \(error)")
                return .usage
            }
        }
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
        guard (options.tlsCertificate == nil) == (options.tlsKey == nil) else {
            console.error("--tls-cert and --tls-key go together")
            return .usage
        }
        if !address.isLocal, options.tlsCertificate == nil || options.passwordFile == nil {
            console.error(
                "--listen \(address): not a loopback address; serving health data to the network needs TLS "
                    + "(--tls-cert, --tls-key) and a password (--password-file): "
                    + (options.tlsCertificate == nil ? "no TLS given" : "no password given")
                    + " (or use 127.0.0.1, [::1] or unix:PATH)")
            return .usage
        }
        var tls: HTTPServer.TLSCredentials?
        var password: PasswordHash?
        do throws(UsageError) {
            if let certificate = options.tlsCertificate, let key = options.tlsKey {
                guard HTTPServer.tlsSupported else {
                    console.error("--tls-cert: this libmicrohttpd was built without HTTPS")
                    return .unavailable
                }
                tls = HTTPServer.TLSCredentials(
                    certificatePEM: try Self.read(certificate, "--tls-cert"), keyPEM: try Self.read(key, "--tls-key"))
            }
            if let file = options.passwordFile {
                let text = String(decoding: try Self.read(file, "--password-file"), as: UTF8.self)
                do throws(PasswordHash.Invalid) {
                    password = try PasswordHash(parsing: text)
                } catch {
                    throw UsageError("--password-file \(file): \(error)")
                }
            }
        } catch {
            console.error("\(error.message)")
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
                server = try HTTPServer(listen: address, tls: tls) { request in await app.handle(request) }
            } catch {
                console.error("\(error)")
                return .unavailable
            }
            // A LAN address is named by whatever the machine is called there: any Host is taken (a rebound name
            // fails the browser's certificate check, and the password guards the rest).
            let gate = SessionGate(
                hosts: address.isLocal ? SessionGate.hosts(for: server.address) : [], password: password,
                secureCookie: tls != nil
            ) {
                let elapsed = ContinuousClock.now - started
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            }
            box.gate = gate
            switch server.address {
            case .tcp:
                console.out("\(tls == nil ? "http" : "https")://\(server.address)/?token=\(gate.loginToken)\n")
            default:
                console.out("listening on \(server.address); log in with /?token=\(gate.loginToken)\n")
            }
            let signal = await Self.waitForSignal()
            server.stop()
            console.err("wearhouse web: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))\n")
            return .success
        }
    }

    /// A certificate, key or password file's bytes (at most ``maximumFileBytes``).
    static func read(_ path: String, _ option: String) throws(UsageError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UsageError("\(option) \(path): cannot be read")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumFileBytes + 1)) ?? Data()
        guard !data.isEmpty, data.count <= maximumFileBytes else {
            throw UsageError("\(option) \(path): empty, or over \(maximumFileBytes) bytes")
        }
        return Array(data)
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
