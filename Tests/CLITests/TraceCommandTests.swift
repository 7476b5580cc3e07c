import Foundation
import Testing

/// `wearhouse replay` and `wearhouse import` through the real binary.
@Suite struct TraceCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "wearhouse-trace-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    /// A strap streaming heart rate (the last line torn, as after a crash).
    static let trace = """
        {"wearhouse-trace":1,"recorder":"test","origin":"live","series-window-ms":60000,"gap-threshold-ms":2500}
        {"kind":"sensor","sensor":"C0:FF:EE:00:00:01","name":"Strap","manufacturer":"Polar","body-location":1,"subject":"alice","source":"wearhouse","source-version":"test","time-zone":"UTC","characteristics":["2a37"],"mono-ns":0,"wall-us":1795946400000000}
        {"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"0648","mono-ns":1000000000,"wall-us":1795946401000000}
        {"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"064a","mono-ns":2000000000,"wall-us":1795946402000000}
        {"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"06","mono-ns":3000000000,"wall-us":1795946403000000}
        {"kind":"connection","sensor":"C0:FF:EE:00:00:01","connected":false,"mono-ns":3500000000,"wall-us":1795946403500000}
        {"kind":"notification","sensor":"C0:FF:EE:00:0
        """

    func write(_ text: String, to name: String) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func replayStoresOnceAndSummarises() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(Self.trace, to: "run.trace")
        let first = try WearhouseRunner.run(["replay", path, "--store", store, "--subject", "bob"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("3 notifications"))
        #expect(first.stdout.contains("Samples built: 2 (2 heartRate)"))
        #expect(first.stdout.contains("Stored: 2 new, 0 duplicates skipped"))
        #expect(first.stdout.contains("Malformed values: 1"))
        #expect(first.stderr.contains("run.trace:7: torn last line skipped"))
        let second = try WearhouseRunner.run(["replay", path, "--store", store, "--subject", "bob", "--json"])
        #expect(second.status == 0)
        #expect(second.stdout.contains(#""duplicates":2"#) && second.stdout.contains(#""inserted":0"#))
        let samples = try WearhouseRunner.run(["samples", "--store", store, "--type", "heartRate", "--format", "csv"])
        #expect(samples.stdout.contains("bob"))
        #expect(samples.stdout.contains("72"))
    }

    @Test func badInputGetsSysexitsCodes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try WearhouseRunner.run(["replay", directory.appendingPathComponent("none").path]).status == 66)
        #expect(try WearhouseRunner.run(["replay", "a", "--speed", "fast"]).status == 64)
        let notATrace = try write("hello\n", to: "notes.txt")
        let refused = try WearhouseRunner.run(["replay", notATrace, "--store", store])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("notes.txt:1: not a wearhouse trace"))
        let bad = try write(
            Self.trace.replacingOccurrences(of: "\"connected\":false", with: "\"connected\":0") + "\n", to: "bad.trace")
        let failed = try WearhouseRunner.run(["replay", bad, "--store", store])
        #expect(failed.status == 65)
        #expect(failed.stderr.contains("bad.trace:6: 'connected' must be true or false"))
        let capture = try WearhouseRunner.run(["import", notATrace, "--format", "btsnoop", "--store", store])
        #expect(capture.status == 65)
        #expect(try WearhouseRunner.run(["import", notATrace, "--map", "nonsense"]).status == 64)
    }

    @Test func aBleakLogImportsToATrace() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try write(
            """
            [2026-02-01 02:53:33] ✅ Conectado
            [2026-02-01 02:53:36] 📖 Read 00002a25-0000-1000-8000-00805f9b34fb: 383663356466643565666638
            [2026-02-01 02:54:16] 🔔 Notify 00002a37-0000-1000-8000-00805f9b34fb: 0044
            [2026-02-01 02:54:18] 🔔 Notify 00002a37-0000-1000-8000-00805f9b34fb: 004c

            """, to: "band.log")
        let out = directory.appendingPathComponent("band.trace").path
        let result = try WearhouseRunner.run(["import", log, "--address", "AA:BB:CC:DD:EE:01", "--to-trace", out])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines[1].contains(#""serial":"86c5dfd5eff8""#))
        #expect(
            lines[3]
                == #"{"kind":"notification","sensor":"AA:BB:CC:DD:EE:01","uuid":"2a37","value":"0044","mono-ns":40000000000,"wall-us":1769914456000000}"#
        )
        let replay = try WearhouseRunner.run(["replay", out, "--store", store])
        #expect(replay.stdout.contains("Samples built: 2 (2 heartRate)"))
    }
}
