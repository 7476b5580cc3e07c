import Synchronization

/// The web app's door: who may in, and what every response carries. A random login token (printed once, as
/// Jupyter does) is exchanged, once, for a session cookie (HttpOnly, SameSite=Strict); every POST must carry the
/// session's CSRF token; the `Host` header must name this server (no DNS rebinding); requests are rate limited
/// (per session, and tighter without one). With a password (a LAN listen, `--password-file`), `/login` takes it
/// too, at most 5 tries and then one every 5 s, and the cookie is `Secure` over TLS. Thread-safe: connections call it
/// from their own threads.
public final class SessionGate: Sendable {
    public struct Session: Sendable, Hashable {
        public var id: String
        /// The hidden field every form carries (``SessionGate/csrfField``).
        public var csrf: String
        /// The subject the person picked (kept here, so that no name goes into a URL).
        public var subject: String?
    }

    /// What ``admit(_:)`` decided.
    public enum Decision: Sendable {
        case allow(Session)
        /// A static file that holds no data (the style sheet): served without a session.
        case asset
        case respond(HTTPResponse)
    }

    public static let cookieName = "wearhouse_session"
    public static let csrfField = "csrf"
    public static let maximumSessions = 16

    /// The token to print in the URL (`?token=`): 256 random bits.
    public let loginToken: String
    private let hosts: Set<String>
    private let now: @Sendable () -> Double
    private let state: Mutex<State>
    private let assets: Set<String>
    private let password: PasswordHash?
    private let secureCookie: Bool

    private struct State {
        var tokenUsed = false
        var sessions: [String: Session] = [:]
        var buckets: [String: Bucket] = [:]
        var anonymous = Bucket(tokens: 30, updated: 0)
        var logins = Bucket(tokens: 5, updated: 0)
    }

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// `hosts`: the `Host` header values accepted (`127.0.0.1:8710`, `localhost:8710`); empty accepts any (a Unix
    /// socket, where no browser of another site can reach). `now`: monotonic seconds (a manual clock in tests).
    public init(
        hosts: Set<String>, assets: Set<String> = ["/style.css", "/favicon.svg", "/favicon.ico"],
        loginToken: String? = nil, password: PasswordHash? = nil, secureCookie: Bool = false,
        now: @escaping @Sendable () -> Double
    ) {
        self.loginToken = loginToken ?? Self.randomHex(bytes: 32)
        self.password = password
        self.secureCookie = secureCookie
        self.hosts = hosts
        self.assets = assets
        self.now = now
        state = Mutex(State())
    }

    /// The hosts a browser may name for a server at `address`.
    public static func hosts(for address: ListenAddress) -> Set<String> {
        guard case .tcp(let host, let port) = address else { return [] }
        var names: Set<String> = ["\(host):\(port)", "localhost:\(port)"]
        if host.contains(":") { names.insert("[\(host)]:\(port)") }
        if port == 80 { names.formUnion([host, "localhost"]) }
        return names
    }

    /// Admits `request` to a session, or answers it: 421 for a foreign Host, 303 with the cookie for the login
    /// token (or the password), 401 without a session (with the password form when there is a password), 403 for a
    /// POST without the CSRF token, 405 for other methods, 429 over the rate.
    public func admit(_ request: HTTPRequest) -> Decision {
        if let password, request.path == "/login", hosts.isEmpty || hosts.contains(request.headers["host"] ?? "") {
            return .respond(logIn(request, password: password))
        }
        if !hosts.isEmpty, !hosts.contains(request.headers["host"] ?? "") {
            return .respond(Self.plain(421, "This server answers only to \(hosts.sorted().joined(separator: ", ")).\n"))
        }
        guard ["GET", "HEAD", "POST"].contains(request.method) else {
            return .respond(Self.plain(405, "Only GET and POST.\n", [("Allow", "GET, HEAD, POST")]))
        }
        if request.method != "POST", assets.contains(request.path) { return .asset }
        let time = now()
        return state.withLock { state -> Decision in
            if let token = request.query["token"] {
                guard Self.take(&state.anonymous, at: time, rate: 1, burst: 30) else { return .respond(Self.tooMany) }
                guard !state.tokenUsed, Self.equal(token, loginToken) else {
                    return .respond(
                        Self.plain(
                            401, "That login token is not valid (each is accepted once). Restart wearhouse web.\n"))
                }
                state.tokenUsed = true
                return .respond(.redirect(request.path, headers: [("Set-Cookie", newSession(&state))]))
            }
            guard let id = request.cookies[Self.cookieName], let session = state.sessions[id] else {
                guard Self.take(&state.anonymous, at: time, rate: 1, burst: 30) else { return .respond(Self.tooMany) }
                if password != nil { return .respond(Self.loginPage(401, problem: nil)) }
                return .respond(
                    Self.plain(401, "Not logged in: open the address that 'wearhouse web' printed.\n"))
            }
            var bucket = state.buckets[id] ?? Bucket(tokens: 200, updated: time)
            defer { state.buckets[id] = bucket }
            guard Self.take(&bucket, at: time, rate: 50, burst: 200) else { return .respond(Self.tooMany) }
            if request.method == "POST" {
                let origin = request.headers["origin"]
                if let origin, origin != "null", !hosts.isEmpty,
                    !hosts.contains(where: { origin == "http://\($0)" || origin == "https://\($0)" })
                {
                    return .respond(Self.plain(403, "Cross-origin form refused.\n"))
                }
                guard let sent = request.form(Self.csrfField), Self.equal(sent, session.csrf) else {
                    return .respond(Self.plain(403, "The form's CSRF token is missing or wrong: reload the page.\n"))
                }
            }
            return .allow(session)
        }
    }

    /// A new session (the oldest sessions go past ``maximumSessions``); returns its `Set-Cookie` value.
    private func newSession(_ state: inout State) -> String {
        if state.sessions.count >= Self.maximumSessions { state.sessions.removeAll() }
        let session = Session(id: Self.randomHex(bytes: 32), csrf: Self.randomHex(bytes: 32), subject: nil)
        state.sessions[session.id] = session
        return "\(Self.cookieName)=\(session.id); HttpOnly; SameSite=Strict; Path=/\(secureCookie ? "; Secure" : "")"
    }

    /// `GET /login`: the password form; `POST /login`: the password checked (PBKDF2 outside the lock), rate
    /// limited across every client (5 tries, then one every 5 s), then a session.
    private func logIn(_ request: HTTPRequest, password: PasswordHash) -> HTTPResponse {
        guard request.method == "POST" else { return Self.loginPage(200, problem: nil) }
        let time = now()
        guard state.withLock({ Self.take(&$0.logins, at: time, rate: 0.2, burst: 5) }) else { return Self.tooMany }
        guard let given = request.form("password"), password.matches(given) else {
            return Self.loginPage(401, problem: "Wrong password.")
        }
        let cookie = state.withLock { newSession(&$0) }
        return .redirect("/", headers: [("Set-Cookie", cookie)])
    }

    /// The password form (no script; the style sheet is served without a session).
    static func loginPage(_ status: Int, problem: String?) -> HTTPResponse {
        let text =
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Log in · wearhouse</title><link "
            + "rel=\"stylesheet\" href=\"/style.css\"></head><body><main><h1>wearhouse</h1>"
            + (problem.map { "<p class=\"error\" id=\"problem\">\($0)</p>" } ?? "")
            + "<form method=\"post\" action=\"/login\" id=\"login\"><label>Password <input type=\"password\" "
            + "name=\"password\" autocomplete=\"current-password\" required autofocus></label> <button>Log in</button>"
            + "</form></main></body></html>\n"
        return HTTPResponse(
            status: status, contentType: "text/html; charset=utf-8", text: text)
    }

    /// Remembers the subject the person picked for this session.
    public func setSubject(_ subject: String?, for session: Session) {
        state.withLock { $0.sessions[session.id]?.subject = subject }
    }

    /// The headers every response gets: a strict Content-Security-Policy (no inline script or style, nothing from
    /// elsewhere, no framing), no sniffing, no referrer, no caching.
    public static let securityHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    static let tooMany = plain(429, "Too many requests; try again in a moment.\n", [("Retry-After", "1")])

    static func plain(_ status: Int, _ text: String, _ headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", text: text, headers: headers)
    }

    /// Takes one token from a bucket refilled at `rate` a second up to `burst`.
    private static func take(_ bucket: inout Bucket, at time: Double, rate: Double, burst: Double) -> Bool {
        bucket.tokens = min(burst, bucket.tokens + max(0, time - bucket.updated) * rate)
        bucket.updated = time
        guard bucket.tokens >= 1 else { return false }
        bucket.tokens -= 1
        return true
    }

    /// Compares in time independent of where the texts differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// Hex of `bytes` random bytes from the system's generator (getrandom(2) on Linux).
    public static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var text = ""
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }
}
