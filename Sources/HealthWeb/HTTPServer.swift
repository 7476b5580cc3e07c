internal import CMicroHTTPD
import Dispatch
import Glibc
import Synchronization

/// Why the server could not start.
public struct HTTPServerError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }

    static func system(_ call: String, _ address: ListenAddress) -> HTTPServerError {
        HTTPServerError("\(call) for \(address): \(String(cString: strerror(errno)))")
    }
}

/// An HTTP server over libmicrohttpd: the one owner of an `MHD_Daemon`. It listens on a socket it makes (TCP or
/// Unix) or inherits (systemd), runs each connection on its own thread (at most ``Limits/maximumConnections``),
/// and hands every complete request to the handler, whose async work the connection's thread waits for (the
/// cooperative pool never blocks). Bodies over ``Limits/maximumBodyBytes`` get 413 (declared length) or a closed
/// connection (chunked); a connection idle for ``Limits/idleTimeoutSeconds`` is closed. libmicrohttpd logs
/// nothing: no request line, header or body reaches a log. ``stop()`` (or the last reference going) stops the
/// daemon and waits for the connections' threads.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: the dispatcher is immutable and the daemon handle is behind a mutex; libmicrohttpd serializes
    // the rest (each connection's callbacks run on that connection's thread).

    public struct Limits: Sendable {
        /// The largest request body taken.
        public var maximumBodyBytes: Int
        /// Connections at once; libmicrohttpd refuses more.
        public var maximumConnections: Int
        /// Seconds a connection may stay without traffic (slow requests, idle keep-alive).
        public var idleTimeoutSeconds: Int
        /// What one connection may use for its request line and headers.
        public var connectionMemoryBytes: Int

        public init(
            maximumBodyBytes: Int = 1 << 20, maximumConnections: Int = 32, idleTimeoutSeconds: Int = 30,
            connectionMemoryBytes: Int = 64 << 10
        ) {
            self.maximumBodyBytes = maximumBodyBytes
            self.maximumConnections = maximumConnections
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.connectionMemoryBytes = connectionMemoryBytes
        }
    }

    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    /// A certificate chain and its private key, PEM (what `--tls-cert` and `--tls-key` name). libmicrohttpd hands
    /// them to GnuTLS; Debian builds it with GnuTLS (``tlsSupported``).
    public struct TLSCredentials: Sendable {
        public var certificatePEM: [UInt8]
        public var keyPEM: [UInt8]

        public init(certificatePEM: [UInt8], keyPEM: [UInt8]) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
        }
    }

    /// Whether this libmicrohttpd speaks HTTPS (built with GnuTLS, as Debian's libmicrohttpd12 is).
    public static var tlsSupported: Bool {
        // 2 is MHD_FEATURE_TLS (Swift imports only its alias, MHD_FEATURE_SSL, under another name).
        MHD_FEATURE(rawValue: 2).map { MHD_is_feature_supported($0) == .YES } ?? false
    }

    /// Where it listens; for TCP with the port the kernel picked when port 0 was asked for.
    public let address: ListenAddress
    private let dispatcher: Dispatcher
    private let daemon: Mutex<OpaquePointer?>
    /// The PEM texts, NUL-terminated, alive as long as the daemon (libmicrohttpd keeps the pointers).
    private let pem: [UnsafeMutablePointer<CChar>]
    /// Whether it speaks HTTPS.
    public let isTLS: Bool

    public init(
        listen: ListenAddress, tls: TLSCredentials? = nil, limits: Limits = Limits(), handler: @escaping Handler
    ) throws(HTTPServerError) {
        guard (1...1_024).contains(limits.maximumConnections), (1...3_600).contains(limits.idleTimeoutSeconds),
            (0...(64 << 20)).contains(limits.maximumBodyBytes),
            ((8 << 10)...(1 << 20)).contains(limits.connectionMemoryBytes)
        else { throw HTTPServerError("server limits out of range") }
        if tls != nil, !Self.tlsSupported { throw HTTPServerError("this libmicrohttpd was built without HTTPS") }
        if let tls,
            tls.certificatePEM.isEmpty || tls.keyPEM.isEmpty || tls.certificatePEM.count > 1 << 20
                || tls.keyPEM.count > 1 << 20
        {
            throw HTTPServerError("the TLS certificate and key must each be 1 byte to 1 MiB of PEM")
        }
        let pem = [tls?.certificatePEM, tls?.keyPEM].compactMap { $0 }.map { bytes in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
            copy[bytes.count] = 0
            return copy
        }
        self.pem = pem
        isTLS = tls != nil
        let socket: Int32
        do {
            socket = try Self.listeningSocket(listen)
        } catch {
            for copy in pem { copy.deallocate() }
            throw error
        }
        address = Self.boundAddress(socket, asked: listen)
        let identity = Self.identity(of: socket)
        let dispatcher = Dispatcher(limits: limits, handler: handler)
        self.dispatcher = dispatcher
        let context = Unmanaged.passUnretained(dispatcher).toOpaque()
        var options = [
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(socket), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: limits.maximumConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: limits.idleTimeoutSeconds, ptr_value: nil),
            MHD_OptionItem(
                option: .CONNECTION_MEMORY_LIMIT, value: limits.connectionMemoryBytes, ptr_value: nil),
            wearhouse_mhd_completed_option(
                { _, _, connectionContext, _ in
                    guard let connectionContext, let state = connectionContext.pointee else { return }
                    Unmanaged<ConnectionState>.fromOpaque(state).release()
                    connectionContext.pointee = nil
                }, context),
        ]
        if pem.count == 2 {
            options += [
                MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(pem[0])),
                MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(pem[1])),
            ]
        }
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        let flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
            | MHD_USE_POLL.rawValue | (pem.count == 2 ? MHD_USE_TLS.rawValue : 0)
        let started = options.withUnsafeMutableBufferPointer { items in
            wearhouse_mhd_start(
                flags, 0,
                { context, connection, url, method, _, upload, uploadSize, connectionContext in
                    guard let context, let connection, let url, let method, let uploadSize, let connectionContext
                    else { return .NO }
                    let dispatcher = Unmanaged<Dispatcher>.fromOpaque(context).takeUnretainedValue()
                    return dispatcher.access(
                        connection, url: String(cString: url), method: String(cString: method), upload: upload,
                        uploadSize: uploadSize, state: connectionContext)
                }, context, items.baseAddress)
        }
        guard let started else {
            Self.closeIfStillOpen(socket, identity)
            for copy in pem { copy.deallocate() }
            throw HTTPServerError(
                "libmicrohttpd could not start on \(listen)"
                    + (tls != nil ? " (is the TLS key the certificate's, both PEM?)" : ""))
        }
        daemon = Mutex(started)
    }

    deinit {
        stop()
        for copy in pem { copy.deallocate() }
    }

    /// Stops listening, ends every connection and waits for their threads. Idempotent.
    public func stop() {
        daemon.withLock { daemon in
            if let running = daemon { MHD_stop_daemon(running) }
            daemon = nil
        }
    }

    /// The device and inode of an open descriptor's file (sockets have inodes of their own), nil when it is closed.
    static func identity(of descriptor: Int32) -> (UInt64, UInt64)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Closes the listening socket after a failed start, unless libmicrohttpd already has: 0.9.75 closes the
    /// socket it was given when it fails after taking it, and not when it fails before. Closing it again closed
    /// whatever descriptor another thread had opened under the same number since (a test run, 2026-12-06: another
    /// server's socket, and libmicrohttpd's abort on its "Close socket failed"). So it is closed only if the number
    /// still names the same socket.
    static func closeIfStillOpen(_ socket: Int32, _ identity: (UInt64, UInt64)?) {
        guard let identity, let now = Self.identity(of: socket), now == identity else { return }
        close(socket)
    }

    /// A listening socket for `address` (close-on-exec, backlog 64): bound here, or systemd's.
    static func listeningSocket(_ address: ListenAddress) throws(HTTPServerError) -> Int32 {
        switch address {
        case .inherited(let descriptor):
            var type: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0,
                type == Int32(SOCK_STREAM.rawValue)
            else { throw HTTPServerError("\(address) is not a stream socket") }
            return descriptor
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .system("socket", address) }
            var status = stat()
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
            var name = sockaddr_un()
            name.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &name.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &name) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 64) == 0 else {
                let error = HTTPServerError.system("bind", address)
                close(fd)
                throw error
            }
            return fd
        case .tcp(let host, let port):
            guard let family = ListenAddress.family(of: host) else { throw HTTPServerError("bad address \(host)") }
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .system("socket", address) }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            let bound: Int32
            if family == AF_INET {
                var name = sockaddr_in()
                name.sin_family = sa_family_t(AF_INET)
                name.sin_port = port.bigEndian
                inet_pton(AF_INET, host, &name.sin_addr)
                bound = withUnsafePointer(to: &name) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            } else {
                setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
                var name = sockaddr_in6()
                name.sin6_family = sa_family_t(AF_INET6)
                name.sin6_port = port.bigEndian
                inet_pton(AF_INET6, host, &name.sin6_addr)
                bound = withUnsafePointer(to: &name) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            guard bound == 0, listen(fd, 64) == 0 else {
                let error = HTTPServerError.system("bind", address)
                close(fd)
                throw error
            }
            return fd
        }
    }

    /// `asked` with the port the socket got.
    static func boundAddress(_ fd: Int32, asked: ListenAddress) -> ListenAddress {
        guard case .tcp(let host, _) = asked else { return asked }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard got == 0 else { return asked }
        let isV4 = storage.ss_family == sa_family_t(AF_INET)
        let port = withUnsafePointer(to: &storage) { pointer -> UInt16 in
            if isV4 {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin6_port)
            }
        }
        return .tcp(host: host, port: port)
    }
}

/// One request's state across libmicrohttpd's calls: the body so far.
private final class ConnectionState {
    var body: [UInt8] = []
    var tooLarge = false
}

/// What the C callbacks reach: the limits and the handler.
private final class Dispatcher: @unchecked Sendable {
    // @unchecked: immutable after init.
    let limits: HTTPServer.Limits
    let handler: HTTPServer.Handler

    init(limits: HTTPServer.Limits, handler: @escaping HTTPServer.Handler) {
        self.limits = limits
        self.handler = handler
    }

    /// libmicrohttpd's access handler: first call (headers in), body chunks, then the last call (body complete).
    func access(
        _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state stateSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let slot = stateSlot.pointee else {
            let state = ConnectionState()
            stateSlot.pointee = Unmanaged.passRetained(state).toOpaque()
            let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length")
                .flatMap { Int(String(cString: $0)) }
            if let declared, declared > limits.maximumBodyBytes {
                state.tooLarge = true
                return queue(Self.tooLarge(limits), on: connection)
            }
            return .YES
        }
        let state = Unmanaged<ConnectionState>.fromOpaque(slot).takeUnretainedValue()
        if state.tooLarge { return .NO }
        if uploadSize.pointee > 0 {
            let size = uploadSize.pointee
            uploadSize.pointee = 0
            guard state.body.count + size <= limits.maximumBodyBytes else {
                state.tooLarge = true
                return .NO  // closes the connection: a chunked body over the limit
            }
            if let upload {
                upload.withMemoryRebound(to: UInt8.self, capacity: size) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            return .YES
        }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let request = HTTPRequest(
            method: method, path: path, query: Self.values(connection, .GET_ARGUMENT_KIND, lowercased: false),
            headers: Self.values(connection, .HEADER_KIND, lowercased: true), body: state.body)
        state.body = []
        let outcome = Waiter<HTTPResponse>()
        let handler = handler
        // allowed: the connection's thread (not the pool) waits for this task right below.
        Task { outcome.finish(await handler(request)) }
        return queue(outcome.wait(), on: connection)
    }

    static func tooLarge(_ limits: HTTPServer.Limits) -> HTTPResponse {
        HTTPResponse(
            status: 413, contentType: "text/plain; charset=utf-8",
            text: "Request body over \(limits.maximumBodyBytes) bytes.\n", headers: [("Connection", "close")])
    }

    static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool) -> [String: String] {
        let collected = Collected(lowercased: lowercased)
        _ = MHD_get_connection_values(
            connection, kind,
            { context, _, key, value in
                guard let context, let key else { return .YES }
                let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                guard collected.values.count < 256 else { return .NO }
                let name = String(cString: key)
                collected.values[collected.lowercased ? name.lowercased() : name] =
                    value.map { String(cString: $0) }
                    ?? ""
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        return collected.values
    }

    func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            made = bytes.withUnsafeBytes {
                MHD_create_response_from_buffer(
                    $0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let producer):
            let stream = Unmanaged.passRetained(StreamState(producer)).toOpaque()
            made = MHD_create_response_from_callback(
                UInt64.max, 32 << 10,
                { context, _, buffer, capacity in
                    guard let context, let buffer else { return -2 }
                    return Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity)
                }, stream, { context in context.map { Unmanaged<StreamState>.fromOpaque($0).release() } })
            if made == nil { Unmanaged<StreamState>.fromOpaque(stream).release() }
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        for header in response.headers { _ = MHD_add_response_header(made, header.name, header.value) }
        return MHD_queue_response(connection, UInt32(clamping: response.status), made)
    }
}

/// A streamed body: chunks from the producer, handed out as libmicrohttpd asks.
private final class StreamState {
    let producer: @Sendable () async throws -> [UInt8]?
    var pending: [UInt8] = []
    var offset = 0

    init(_ producer: @escaping @Sendable () async throws -> [UInt8]?) {
        self.producer = producer
    }

    /// libmicrohttpd's content reader: bytes copied, -1 at the end, -2 after an error.
    func read(into buffer: UnsafeMutablePointer<CChar>, _ capacity: Int) -> Int {
        while offset == pending.count {
            let producer = producer
            let outcome = Waiter<Result<[UInt8]?, any Error>>()
            // allowed: the connection's thread (not the pool) waits for this task right below.
            Task {
                do { outcome.finish(.success(try await producer())) } catch { outcome.finish(.failure(error)) }
            }
            switch outcome.wait() {
            case .success(let chunk?):
                pending = chunk
                offset = 0
            case .success(nil): return -1  // MHD_CONTENT_READER_END_OF_STREAM
            case .failure: return -2  // MHD_CONTENT_READER_END_WITH_ERROR
            }
        }
        let count = min(capacity, pending.count - offset)
        pending.withUnsafeBytes { raw in
            buffer.withMemoryRebound(to: UInt8.self, capacity: count) { target in
                for index in 0..<count { target[index] = raw[offset + index] }
            }
        }
        offset += count
        return count
    }
}

/// What ``Dispatcher/values(_:_:lowercased:)`` collects through libmicrohttpd's iterator.
private final class Collected {
    let lowercased: Bool
    var values: [String: String] = [:]

    init(lowercased: Bool) {
        self.lowercased = lowercased
    }
}

/// One value handed from a task to a thread that waits for it (a connection's thread, never the pool's).
final class Waiter<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is written once before the semaphore's signal and read after its wait.
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: Value?

    func finish(_ value: Value) {
        self.value = value
        semaphore.signal()
    }

    func wait() -> Value {
        semaphore.wait()
        guard let value else { preconditionFailure("Waiter woke without a value") }
        return value
    }
}
