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

    /// A LAN listen needs both TLS and a password; a password file must hold a hash, never the password.
    @Test func lanListensNeedTLSAndAPassword() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("health.db").path
        let pem = folder.appendingPathComponent("any.pem").path
        try "not checked before the password".write(toFile: pem, atomically: true, encoding: .utf8)
        let plain = folder.appendingPathComponent("plain.password").path
        try "hunter2\n".write(toFile: plain, atomically: true, encoding: .utf8)

        let hashed = try WearhouseRunner.run(["web", "--hash-password"], stdin: "correct horse\n")
        #expect(hashed.status == 0, "\(hashed.stderr)")
        let line = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("pbkdf2-sha256$200000$") && !line.contains("correct"), "\(line)")
        let hashFile = folder.appendingPathComponent("web.password").path
        try (line + "\n").write(toFile: hashFile, atomically: true, encoding: .utf8)

        let cases: [([String], String)] = [
            (["--password-file", hashFile], "no TLS given"),
            (["--tls-cert", pem, "--tls-key", pem], "no password given"),
            (["--tls-cert", pem, "--password-file", hashFile], "--tls-cert and --tls-key go together"),
            (["--tls-cert", pem, "--tls-key", pem, "--password-file", plain], "must not hold the password itself"),
            (
                [
                    "--tls-cert", folder.appendingPathComponent("missing.pem").path, "--tls-key", pem,
                    "--password-file", hashFile,
                ], "cannot be read"
            ),
        ]
        for (arguments, message) in cases {
            let result = try WearhouseRunner.run(["web", "--listen", "0.0.0.0:0", "--store", store] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "no URL, no token for \(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: store), "a refused start creates no store")
    }
}
