import HealthWeb
import Synchronization
import Testing

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
}
