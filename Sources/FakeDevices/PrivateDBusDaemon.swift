public import Foundation
internal import Support
internal import Synchronization

/// A private `dbus-daemon`: its own config (type system, allow everything) and socket in a fresh temporary
/// directory. Tests and `wearhouse demo` run FakeBlueZ on one and never touch the machine's real system bus.
///
/// ```swift
/// let daemon = try await PrivateDBusDaemon.start()
/// defer { daemon.stop() }
/// let connection = try await DBusConnection.connect(to: .address(daemon.address))
/// ```
///
/// Tests reach it through TestSupport's `PrivateBus`; `wearhouse demo` uses it directly.
public final class PrivateDBusDaemon: Sendable {
    /// The address to connect to (`unix:path=…/bus,guid=…`).
    public let address: String
    /// The temporary directory holding the config, the socket and the daemon's log.
    public let directory: URL
    private let process: ChildProcess
    private let stopped = Mutex(false)

    /// Starts a daemon and waits (up to 5 s, without blocking a thread) until it has printed its address.
    public static func start() async throws -> PrivateDBusDaemon {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("wearhouse-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var started: ChildProcess?
        do {
            let config = directory.appendingPathComponent("bus.conf")
            try configuration(socket: directory.appendingPathComponent("bus").path)
                .write(to: config, atomically: true, encoding: .utf8)
            let log = directory.appendingPathComponent("daemon.log")
            let output = try ChildProcess.pipe()
            defer { close(output.read) }
            let process: ChildProcess
            do {
                defer { close(output.write) }
                process = try ChildProcess.start(
                    "/usr/bin/dbus-daemon",
                    ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"],
                    output: .descriptor(output.write), errors: .file(log.path, append: false))
            }
            started = process
            let line = try await address(from: output.read, of: process, log: log)
            return PrivateDBusDaemon(address: line, directory: directory, process: process)
        } catch {
            // The daemon failed, or the wait was cancelled: nothing of it is left behind.
            started?.signal(SIGKILL)
            started?.wait()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The first line the daemon prints (its address), read without blocking a thread, within 5 s.
    private static func address(from output: Int32, of process: ChildProcess, log: URL) async throws -> String {
        _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
        var printed: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = ContinuousClock.now + .seconds(5)
        while !printed.contains(UInt8(ascii: "\n")) {
            let count = read(output, &buffer, buffer.count)
            if count > 0 {
                printed += buffer[0..<count]
            } else if count == 0 || ContinuousClock.now > deadline || !process.isRunning {
                let message = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw PrivateDBusDaemonError(message: "dbus-daemon did not print its address: \(message)")
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        return String(decoding: printed.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    private init(address: String, directory: URL, process: ChildProcess) {
        self.address = address
        self.directory = directory
        self.process = process
    }

    deinit {
        stop()
    }

    /// Terminates the daemon and removes its directory. Idempotent.
    public func stop() {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        // SIGKILL: the daemon has nothing to save, and the wait after it is short: the kernel ends it at once.
        process.signal(SIGKILL)
        process.wait()
        try? FileManager.default.removeItem(at: directory)
    }

    static func configuration(socket: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_type="*"/>
            <allow eavesdrop="true"/>
          </policy>
        </busconfig>

        """
    }
}

public struct PrivateDBusDaemonError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
