import Testing

@testable import PostgresStore

/// The reconnection policy, as a plain value.
@Suite struct PostgresLinkTests {
    @Test func aLostConnectionIsRetriedAtOnceThenWithGrowingWaits() {
        let start = ContinuousClock().now
        var link = PostgresLink()
        #expect(link.attempt(at: start) == .connect)
        link.lost()
        #expect(link.attempt(at: start) == .connect)
        link.failed(at: start, reason: "down")
        #expect(link.attempt(at: start) == .wait(until: start + .milliseconds(100)))
        #expect(link.attempt(at: start + .milliseconds(100)) == .connect)
        link.failed(at: start, reason: "down")
        #expect(link.attempt(at: start) == .wait(until: start + .milliseconds(200)))
        for _ in 0..<20 { link.failed(at: start, reason: "down") }
        #expect(link.attempt(at: start) == .wait(until: start + .seconds(5)))
        #expect(link.lastFailure == "down")
        link.connected()
        #expect(link.state == .connected)
        #expect(link.lastFailure == nil)
    }
}
