import Foundation
import HealthWeb
import Testing

/// The libmicrohttpd wrapper against real sockets: requests reach the handler whole, bodies over the limit are
/// cut, slow requests are dropped, streamed bodies arrive in order, Unix sockets work, stop is clean.
@Suite struct HTTPServerTests {
    static func echo(_ request: HTTPRequest) async -> HTTPResponse {
        let query = request.query.keys.sorted().map { "\($0)=\(request.query[$0] ?? "")" }.joined(separator: "&")
        let text =
            "\(request.method) \(request.path) \(query) \(request.headers["x-test"] ?? "-") \(request.body.count)"
            + " \(request.form("name") ?? "-")"
        return HTTPResponse(status: 200, contentType: "text/plain", text: text, headers: [("X-Answer", "yes")])
    }

    @Test func requestsReachTheHandlerWhole() async throws {
        let server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), handler: Self.echo)
        defer { server.stop() }
        guard case .tcp(_, let port) = server.address else { Issue.record("not TCP"); return }
        #expect(port != 0)
        let client = RawHTTP(address: server.address)
        let get = try await client.sendOff("GET /type/heartRate?range=week&x=a%20b HTTP/1.1\r\nHost: h\r\nX-Test: 7")
        #expect(get.status == 200)
        #expect(get.body == "GET /type/heartRate range=week&x=a b 7 0 -")
        #expect(get.headers["x-answer"] == "yes")
        let form = Array("name=J%C3%BCrgen+M&other=1".utf8)
        let post = try await client.sendOff(
            "POST /add HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded", body: form)
        #expect(post.body == "POST /add  - \(form.count) Jürgen M")
    }

    @Test func bodiesOverTheLimitAreRefused() async throws {
        let limits = HTTPServer.Limits(maximumBodyBytes: 1_000)
        let server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), limits: limits, handler: Self.echo)
        defer { server.stop() }
        let client = RawHTTP(address: server.address)
        let fits = try await client.sendOff("POST /x HTTP/1.1\r\nHost: h", body: [UInt8](repeating: 65, count: 1_000))
        #expect(fits.status == 200)
        // A declared length over the limit is answered before the body is read.
        let declared = try await client.sendOff("POST /x HTTP/1.1\r\nHost: h", body: [], declaredLength: 50_000_000)
        #expect(declared.status == 413)
        // A chunked body that grows past the limit: the connection is closed, the handler never runs.
        let answer = try await offPool {
            let fd = try client.connect()
            defer { close(fd) }
            client.write(fd, Array("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            for _ in 0..<3 {
                client.write(fd, Array("200\r\n".utf8) + [UInt8](repeating: 66, count: 512) + Array("\r\n".utf8))
            }
            client.write(fd, Array("0\r\n\r\n".utf8))
            return RawHTTP.parse(client.readAll(fd))
        }
        #expect(answer.status != 200)
    }

    @Test func slowRequestsAreCut() async throws {
        let limits = HTTPServer.Limits(idleTimeoutSeconds: 1)
        let server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), limits: limits, handler: Self.echo)
        defer { server.stop() }
        let client = RawHTTP(address: server.address)
        let (answer, closedByServer) = try await offPool {
            let fd = try client.connect()
            defer { close(fd) }
            // A guard, not a measurement: should the server never cut the connection, the read gives up after a
            // minute with EAGAIN and the test fails instead of hanging.
            var guardTime = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guardTime, socklen_t(MemoryLayout<timeval>.size))
            client.write(fd, Array("GET / HTTP/1.1\r\nHost: h\r\n".utf8))  // never finished
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += buffer[0..<count]
                    continue
                }
                return (received, count == 0 || errno == ECONNRESET)
            }
        }
        #expect(closedByServer, "the server kept a request that never ended open for a minute")
        #expect(RawHTTP.parse(answer).status != 200)
    }

    @Test func streamedBodiesArriveInOrder() async throws {
        let server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0)) { _ in
            let counter = Counter()
            return HTTPResponse(status: 200, body: .stream { await counter.next() })
        }
        defer { server.stop() }
        let response = try await RawHTTP(address: server.address).sendOff("GET /export HTTP/1.1\r\nHost: h")
        #expect(response.status == 200)
        #expect(response.body == (0..<5).map { "line \($0)\n" }.joined())
    }

    @Test func unixSocketsServe() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString).sock").path
        defer { unlink(path) }
        let server = try HTTPServer(listen: .unix(path: path), handler: Self.echo)
        defer { server.stop() }
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let response = try await RawHTTP(address: server.address).sendOff("GET /u HTTP/1.1\r\nHost: localhost")
        #expect(response.body.hasPrefix("GET /u"))
    }

    @Test func stopClosesTheSocket() async throws {
        let server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), handler: Self.echo)
        let address = server.address
        server.stop()
        server.stop()
        #expect(throws: (any Error).self) { try RawHTTP(address: address).connect() }
    }

    /// Debian's libmicrohttpd12 is built with GnuTLS; a key that is not PEM stops the start with a clear error
    /// (the end-to-end HTTPS test, with openssl's certificate and Python's ssl, is in Tests/Web/browser_tests.py).
    @Test func tlsIsBuiltInAndBadKeysAreRefused() throws {
        #expect(HTTPServer.tlsSupported)
        let junk = HTTPServer.TLSCredentials(certificatePEM: Array("not a certificate".utf8), keyPEM: Array("no".utf8))
        do {
            _ = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), tls: junk, handler: Self.echo)
            Issue.record("a server started with a junk key")
        } catch {
            #expect(error.description.contains("TLS key"), "\(error)")
        }
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(
                listen: .tcp(host: "127.0.0.1", port: 0), tls: .init(certificatePEM: [], keyPEM: []),
                handler: Self.echo)
        }
    }

    @Test func listenAddressesParseAndOnlyLoopbackIsLocal() async throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8710") == .tcp(host: "127.0.0.1", port: 8710))
        #expect(try ListenAddress(parsing: "[::1]:80") == .tcp(host: "::1", port: 80))
        #expect(try ListenAddress(parsing: "unix:/run/w.sock") == .unix(path: "/run/w.sock"))
        #expect(try ListenAddress(parsing: "127.8.0.1:1").isLocal)
        #expect(try ListenAddress(parsing: "[::1]:1").isLocal)
        for remote in ["0.0.0.0:8710", "192.168.1.10:8710", "[::]:8710", "[2001:db8::1]:1"] {
            #expect(try !ListenAddress(parsing: remote).isLocal, "\(remote)")
        }
        for bad in ["localhost:8710", "127.0.0.1", "127.0.0.1:70000", "1.2.3.4:x", "unix:", "[::1:80"] {
            #expect(throws: ListenAddress.Invalid.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }
}

/// Five lines, then the end.
actor Counter {
    var count = 0

    func next() -> [UInt8]? {
        defer { count += 1 }
        return count < 5 ? Array("line \(count)\n".utf8) : nil
    }
}
