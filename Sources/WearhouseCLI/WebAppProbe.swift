public import Foundation
import Health
import HealthWeb
public import StoreEngine

/// The Health app's pages without the socket, for the benchmark harness (Sources/Benchmarks/WebScenario.swift):
/// the same ``WebApp`` the server runs, behind the same gate, with one logged-in session. What it times is the
/// server's whole work for a page: the gate, the store calls and the HTML.
public struct WebAppProbe: Sendable {
    let app: WebApp
    let cookie: String

    public init(store: any HealthStoreEngine, timeZone: TimeZone) async {
        let gate = SessionGate(hosts: [], loginToken: "probe", now: { 0 })
        app = WebApp(store: store, timeZone: timeZone, stepGoal: 10_000, gate: { gate })
        let login = await app.handle(HTTPRequest(method: "GET", path: "/", query: ["token": "probe"]))
        cookie = login.header("Set-Cookie").map { String($0.prefix { $0 != ";" }) } ?? ""
    }

    /// GETs `path` with `query`; returns the status and the body's size in bytes.
    public func get(_ path: String, query: [String: String] = [:]) async -> (status: Int, bytes: Int) {
        let response = await app.handle(
            HTTPRequest(method: "GET", path: path, query: query, headers: ["cookie": cookie]))
        guard case .bytes(let body) = response.body else { return (response.status, 0) }
        return (response.status, body.count)
    }
}
