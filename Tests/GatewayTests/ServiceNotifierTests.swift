import Foundation
import Gateway
import Testing

/// sd_notify reads `NOTIFY_SOCKET` (and sd_watchdog_enabled `WATCHDOG_USEC`) on each call, so these tests set
/// the variables, which is only safe with no other thread reading the environment: each runs in a child
/// process of its own (an exit test) and prints what the socket received.
@Suite struct ServiceNotifierTests {
    @Test func formatsAssignments() {
        #expect(
            ServiceNotifier.message([
                .ready, .status("2 sensors\nconnected"), .watchdog, .stopping, .reloading, .errno(5),
                .extendTimeout(.milliseconds(1500)),
            ]) == "READY=1\nSTATUS=2 sensors connected\nWATCHDOG=1\nSTOPPING=1\nRELOADING=1\nERRNO=5\n"
                + "EXTEND_TIMEOUT_USEC=1500000")
    }

    @Test func sendsDatagramsToNotifySocket() async throws {
        let result = try await #require(
            processExitsWith: .success, observing: [\.standardOutputContent]
        ) {
            let socket = try NotifySocket()
            setenv("NOTIFY_SOCKET", socket.path, 1)
            let notifier = ServiceNotifier()
            precondition(notifier.isListening)
            precondition(notifier.ready(status: "Started") == .sent)
            precondition(notifier.watchdog() == .sent)
            precondition(notifier.status("1 sensor connected, 240 samples/min") == .sent)
            precondition(notifier.reloading() == .sent)
            precondition(notifier.stopping(status: "Stopping") == .sent)
            var received: [String] = []
            for _ in 0..<5 { received.append(try socket.receive()) }
            // sd_notify does not unset the variable (unset_environment = 0).
            precondition(getenv("NOTIFY_SOCKET") != nil)
            print(received.joined(separator: "\n--\n"))
        }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        let datagrams = output.split(separator: "\n--\n").map(String.init)
        #expect(datagrams.count == 5)
        guard datagrams.count == 5 else { return }
        #expect(datagrams[0] == "READY=1\nSTATUS=Started")
        #expect(datagrams[1] == "WATCHDOG=1")
        #expect(datagrams[2] == "STATUS=1 sensor connected, 240 samples/min")
        #expect(datagrams[3].hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(datagrams[4].trimmingCharacters(in: .newlines) == "STOPPING=1\nSTATUS=Stopping")
    }

    @Test func doesNothingWithoutNotifySocket() async {
        await #expect(processExitsWith: .success) {
            unsetenv("NOTIFY_SOCKET")
            let notifier = ServiceNotifier()
            precondition(!notifier.isListening)
            precondition(notifier.ready() == .notListening)
            precondition(notifier.watchdog() == .notListening)
            setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1)
            guard case .failed = notifier.ready() else { preconditionFailure("expected a failure") }
        }
    }

    @Test func readsTheWatchdogInterval() async {
        await #expect(processExitsWith: .success) {
            unsetenv("WATCHDOG_USEC")
            unsetenv("WATCHDOG_PID")
            precondition(ServiceNotifier.watchdogTimeout() == nil)
            setenv("WATCHDOG_USEC", "30000000", 1)
            precondition(ServiceNotifier.watchdogTimeout() == .seconds(30))
            precondition(ServiceNotifier.watchdogPingInterval() == .seconds(15))
            // Meant for another process: not ours to ping.
            setenv("WATCHDOG_PID", "1", 1)
            precondition(ServiceNotifier.watchdogTimeout() == nil)
            setenv("WATCHDOG_PID", String(getpid()), 1)
            precondition(ServiceNotifier.watchdogTimeout() == .seconds(30))
        }
    }
}

/// A bound AF_UNIX datagram socket in a fresh temporary directory, as systemd's notify socket.
final class NotifySocket {
    let path: String
    let descriptor: Int32

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-notify-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("notify").path
        unlink(path)
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
        rmdir((path as NSString).deletingLastPathComponent)
    }

    /// The next datagram as text (waits up to 5 s).
    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
