import Foundation
import HealthWeb

/// Runs blocking socket work on a thread of its own: the cooperative pool (2 threads on 2 cores) must stay free for
/// the server's handlers, which the blocked client waits for.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// A plain HTTP/1.1 client over a socket, so that the tests send exactly the bytes they mean (a forged form, a
/// lying Content-Length, half a request) and see exactly what the server does with the connection.
struct RawHTTP: Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: String
        /// The server closed the connection without a response.
        var closedEarly: Bool
    }

    let address: ListenAddress

    /// Connects to the server (TCP or Unix socket).
    func connect() throws -> Int32 {
        switch address {
        case .tcp(_, let port):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var name = sockaddr_in()
            name.sin_family = sa_family_t(AF_INET)
            name.sin_port = port.bigEndian
            name.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let done = withUnsafePointer(to: &name) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard done == 0 else { throw POSIXError(.ECONNREFUSED) }
            return fd
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var name = sockaddr_un()
            name.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &name.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let done = withUnsafePointer(to: &name) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard done == 0 else { throw POSIXError(.ECONNREFUSED) }
            return fd
        case .inherited: throw POSIXError(.EINVAL)
        }
    }

    /// Sends `head` (the request line and headers, without the blank line) and `body`, then reads to the end.
    func send(_ head: String, body: [UInt8] = [], declaredLength: Int? = nil) throws -> Response {
        let fd = try connect()
        defer { close(fd) }
        var bytes = Array((head + "\r\nConnection: close\r\n").utf8)
        if !body.isEmpty || declaredLength != nil {
            bytes += Array("Content-Length: \(declaredLength ?? body.count)\r\n".utf8)
        }
        bytes += Array("\r\n".utf8) + body
        write(fd, bytes)
        return Self.parse(readAll(fd))
    }

    /// ``send(_:body:declaredLength:)`` on a thread of its own.
    func sendOff(_ head: String, body: [UInt8] = [], declaredLength: Int? = nil) async throws -> Response {
        try await offPool { try send(head, body: body, declaredLength: declaredLength) }
    }

    func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return }
            offset += written
        }
    }

    func readAll(_ fd: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    static func parse(_ bytes: [UInt8]) -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else {
            return Response(status: 0, headers: [:], body: "", closedEarly: true)
        }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"] == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body, closedEarly: false)
    }

    static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var out = ""
        while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
            let start = line.upperBound
            let end = rest.utf8.index(start, offsetBy: size)
            out += rest[start..<end]
            rest = rest[end...].dropFirst()  // "\r\n" is one Character
        }
        return out
    }
}
