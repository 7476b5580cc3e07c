import Synchronization
import Testing

@testable import HealthWeb

/// The web app's door, decision by decision, on a manual clock.
@Suite struct SessionGateTests {
    final class Clock: Sendable {
        let seconds = Mutex(0.0)
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    let clock = Clock()
    let host = "127.0.0.1:8710"
    var gate: SessionGate {
        SessionGate(hosts: [host, "localhost:8710"], loginToken: "t0ken") { [clock] in clock.seconds.withLock { $0 } }
    }

    func request(
        _ method: String = "GET", _ path: String = "/", query: [String: String] = [:], cookie: String? = nil,
        host: String? = nil, form: String? = nil, origin: String? = nil
    ) -> HTTPRequest {
        var headers = ["host": host ?? self.host]
        if let cookie { headers["cookie"] = "other=1; \(SessionGate.cookieName)=\(cookie)" }
        if let origin { headers["origin"] = origin }
        if form != nil { headers["content-type"] = "application/x-www-form-urlencoded" }
        return HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array((form ?? "").utf8))
    }

    func status(_ decision: SessionGate.Decision) -> Int {
        switch decision {
        case .allow: 200
        case .asset: 0
        case .respond(let response): response.status
        }
    }

    /// Logs in with the token; returns the session.
    func login(_ gate: SessionGate) throws -> SessionGate.Session {
        guard case .respond(let response) = gate.admit(request(query: ["token": "t0ken"])),
            let cookie = response.header("Set-Cookie")
        else { throw Failure() }
        #expect(response.status == 303)
        #expect(response.header("Location") == "/")
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
        let id = String(cookie.split(separator: ";")[0].split(separator: "=")[1])
        guard case .allow(let session) = gate.admit(request(cookie: id)) else { throw Failure() }
        return session
    }

    struct Failure: Error {}

    @Test func nothingWithoutASession() {
        let gate = gate
        #expect(status(gate.admit(request())) == 401)
        #expect(status(gate.admit(request("POST", "/add", form: "type=heartRate&value=1"))) == 401)
        #expect(status(gate.admit(request(cookie: "made-up"))) == 401)
        #expect(status(gate.admit(request(query: ["token": "wrong"]))) == 401)
        #expect(status(gate.admit(request("GET", "/style.css"))) == 0)
    }

    @Test func theTokenIsAcceptedOnce() throws {
        let gate = gate
        _ = try login(gate)
        #expect(status(gate.admit(request(query: ["token": "t0ken"]))) == 401)
    }

    @Test func formsNeedTheSessionsCSRFToken() throws {
        let gate = gate
        let session = try login(gate)
        #expect(status(gate.admit(request("POST", "/add", cookie: session.id, form: "type=heartRate&value=1"))) == 403)
        #expect(
            status(
                gate.admit(
                    request("POST", "/add", cookie: session.id, form: "csrf=\(String(repeating: "0", count: 64))")))
                == 403)
        let good = "type=heartRate&csrf=\(session.csrf)"
        #expect(status(gate.admit(request("POST", "/add", cookie: session.id, form: good))) == 200)
        // The right token from another site's page is still refused.
        #expect(
            status(gate.admit(request("POST", "/add", cookie: session.id, form: good, origin: "http://evil.example")))
                == 403)
        #expect(
            status(gate.admit(request("POST", "/add", cookie: session.id, form: good, origin: "http://\(host)"))) == 200
        )
        #expect(status(gate.admit(request("PUT", "/add", cookie: session.id))) == 405)
    }

    @Test func aForeignHostIsRefused() throws {
        let gate = gate
        #expect(status(gate.admit(request(query: ["token": "t0ken"], host: "rebound.example:8710"))) == 421)
        _ = try login(gate)  // the token was not spent by the refused request
    }

    @Test func requestsAreRateLimited() throws {
        let gate = gate
        let session = try login(gate)
        var statuses: [Int] = []
        for _ in 0..<250 { statuses.append(status(gate.admit(request(cookie: session.id)))) }
        #expect(statuses.prefix(199).allSatisfy { $0 == 200 })
        #expect(statuses.last == 429)
        clock.advance(1)
        #expect(status(gate.admit(request(cookie: session.id))) == 200)
        // Without a session, far fewer.
        let anonymous = (0..<40).map { _ in status(gate.admit(request())) }
        #expect(anonymous.contains(429))
    }

    @Test func passwordsAreHashedAndRead() throws {
        let hash = try PasswordHash(password: "correct horse", iterations: 10_000)
        #expect(hash.matches("correct horse"))
        #expect(!hash.matches("correct hors") && !hash.matches("") && !hash.matches("correct horse "))
        let read = try PasswordHash(parsing: "  \(hash)\n")
        #expect(read == hash && read.matches("correct horse"))
        #expect(try PasswordHash(password: "correct horse", iterations: 10_000).salt != hash.salt, "a fresh salt")
        // RFC 7914's PBKDF2-HMAC-SHA256 vector: P="passwd", S="salt", c=1, the first 32 bytes.
        #expect(
            try PasswordHash.hex(PasswordHash.derive(Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1))
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc")
        for bad in [
            "hunter2", "pbkdf2-sha256$1$00112233445566778899$" + String(repeating: "ab", count: 32),
            "pbkdf2-sha256$20000$zz$" + String(repeating: "ab", count: 32), "pbkdf2-sha256$20000$0011223344556677$ab",
        ] {
            #expect(throws: PasswordHash.Invalid.self) { try PasswordHash(parsing: bad) }
        }
    }

    @Test func aPasswordLogsIn() throws {
        let password = try PasswordHash(password: "correct horse", iterations: 10_000)
        let gate = SessionGate(hosts: [], loginToken: "t0ken", password: password, secureCookie: true) { [clock] in
            clock.seconds.withLock { $0 }
        }
        // Without a session: the password form, with a 401.
        guard case .respond(let form) = gate.admit(request()) else { throw Failure() }
        #expect(form.status == 401)
        guard case .bytes(let page) = form.body else { throw Failure() }
        #expect(String(decoding: page, as: UTF8.self).contains("name=\"password\""))
        #expect(status(gate.admit(request("GET", "/login"))) == 200)
        #expect(status(gate.admit(request("POST", "/login", form: "password=wrong"))) == 401)
        guard case .respond(let done) = gate.admit(request("POST", "/login", form: "password=correct+horse")),
            let cookie = done.header("Set-Cookie")
        else { throw Failure() }
        #expect(done.status == 303 && cookie.contains("; Secure") && cookie.contains("HttpOnly"))
        let id = String(cookie.split(separator: ";")[0].split(separator: "=")[1])
        #expect(status(gate.admit(request(cookie: id, host: "192.0.2.1:8710"))) == 200, "any Host on a LAN listen")
        // Guessing: 5 tries at once (one was spent right and one wrong above), then one every 5 s.
        let guesses = (0..<5).map { _ in status(gate.admit(request("POST", "/login", form: "password=guess"))) }
        #expect(guesses == [401, 401, 401, 429, 429])
        clock.advance(5)
        #expect(status(gate.admit(request("POST", "/login", form: "password=correct+horse"))) == 303)
        #expect(status(gate.admit(request("POST", "/login", form: "password=correct+horse"))) == 429)
    }
}
