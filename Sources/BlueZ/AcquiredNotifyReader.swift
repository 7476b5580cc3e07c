internal import DBus
internal import GATT
internal import Glibc
internal import Synchronization

/// Reads the socket `AcquireNotify` hands out, on a thread of its own (`docs/bluez.md`, R11): bluetoothd sends each
/// notification as one SEQPACKET datagram, so every `recv` is one value. An empty notification is a 0-byte
/// datagram, which `recv` returns exactly like the end of the stream; only `POLLHUP` tells them apart
/// (bleak#1982). The socket hangs up when the link drops: the reader then ends, and the client acquires again
/// after the next connection.
final class AcquiredNotifyReader: Sendable {
    enum Event: Sendable {
        case value([UInt8], Timestamp)
        case closed
    }

    let events: AsyncStream<Event>
    private let fd: Int32
    private let state: SocketState

    /// Starts reading `fd` (which the reader owns and closes), at most `mtu` bytes a datagram.
    init(fd: Int32, mtu: Int, clock: @escaping @Sendable () -> Timestamp) throws(DBusError) {
        self.fd = fd
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = events
        let state = SocketState()
        self.state = state
        let context = Unmanaged.passRetained(
            Context(fd: fd, size: max(mtu, 23), clock: clock, continuation: continuation, state: state)
        ).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Context>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            Glibc.close(fd)
            throw DBusError(kind: .system, operation: "pthread_create", errno: result, message: "cannot start a reader")
        }
        pthread_detach(thread)
    }

    /// Stops reading: the thread sees the hang-up, closes the socket and finishes the stream. Idempotent, and
    /// nothing once the thread has closed the socket itself (its number may be another file's by then).
    func close() {
        state.flags.withLock { flags in
            if !flags.stopRequested, !flags.closed { shutdown(fd, Int32(SHUT_RDWR)) }
            flags.stopRequested = true
        }
    }

    /// Shared by ``close()`` and the thread: whether a stop was asked for, and whether the socket is closed.
    private final class SocketState: Sendable {
        struct Flags {
            var stopRequested = false
            var closed = false
        }
        let flags = Mutex(Flags())
    }

    /// What the thread needs; the thread owns it.
    private final class Context: @unchecked Sendable {
        // @unchecked Sendable: handed to exactly one thread at creation, never shared after.
        let fd: Int32
        let size: Int
        let clock: @Sendable () -> Timestamp
        let continuation: AsyncStream<Event>.Continuation
        let state: SocketState

        init(
            fd: Int32, size: Int, clock: @escaping @Sendable () -> Timestamp,
            continuation: AsyncStream<Event>.Continuation, state: SocketState
        ) {
            self.fd = fd
            self.size = size
            self.clock = clock
            self.continuation = continuation
            self.state = state
        }

        func run() {
            var buffer = [UInt8](repeating: 0, count: size)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            loop: while true {
                poller.revents = 0
                let ready = poll(&poller, 1, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                let hungUp = poller.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                if poller.revents & Int16(POLLIN) != 0 {
                    let count = buffer.withUnsafeMutableBytes {
                        recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    switch count {
                    case 0 where hungUp:
                        break loop
                    case 0...:
                        continuation.yield(.value(Array(buffer[0..<count]), clock()))
                        continue loop
                    default:
                        if errno == EAGAIN || errno == EINTR { continue loop }
                        break loop
                    }
                }
                if hungUp { break }
            }
            state.flags.withLock { flags in
                Glibc.close(fd)
                flags.closed = true
            }
            continuation.yield(.closed)
            continuation.finish()
        }
    }
}
