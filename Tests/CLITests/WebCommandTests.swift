import Foundation
import Testing

/// `wearhouse web`'s command line: what it refuses before it serves anything (the pages and their rules run in
/// Tests/HealthWebTests and Tests/Web/browser_tests.py).
@Suite struct WebCommandTests {
    @Test func nonLoopbackAddressesAreRefused() throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString).db").path
        for address in ["0.0.0.0:8710", "192.168.1.10:8710", "[::]:8710"] {
            let result = try WearhouseRunner.run(["web", "--listen", address, "--store", store])
            #expect(result.status == 64, "\(address)")
            #expect(
                result.stderr.contains("not a loopback address") && result.stderr.contains("TLS"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "no URL, no token for \(address)")
        }
        let bad = try WearhouseRunner.run(["web", "--listen", "localhost", "--store", store])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--listen"))
        #expect(!FileManager.default.fileExists(atPath: store), "a refused start creates no store")
    }
}
