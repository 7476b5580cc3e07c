/// Checks `done` every `interval` until it holds or `timeout` has passed, and says whether it held: for what another
/// process does (the `wearhouse` binary, a server, a fake on a bus) that a test cannot await. What happens inside
/// the test's own process is awaited instead, on a manual clock.
public func eventually(
    timeout: Duration, every interval: Duration = .milliseconds(100), _ done: () async throws -> Bool
) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if try await done() { return true }
        guard clock.now < deadline else { return false }
        try await Task.sleep(for: interval)
    }
}
