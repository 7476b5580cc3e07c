import Foundation
import Support
import TestSupport
import Testing

/// `import-samples` of files larger than one batch (ImportReader.batchLines, 10,000 lines): every batch goes into
/// one transaction, so a refused line or a SIGKILL anywhere leaves the store with all of the file or none of it.
@Suite struct StreamingImportTests {
    /// `count` heart rates a second apart from `base`, one flat line each; line `bad` (1-based) has a negative
    /// value, which the parser accepts and the store refuses.
    static func lines(count: Int, base: Int, bad: Int? = nil) -> String {
        (1...count).map { line in
            "{\"type\":\"heartRate\",\"start\":\"\(isoUTC(base + line))\",\"value\":\(line == bad ? -1 : 60 + line % 60),"
                + "\"source\":\"org.example.import\"}"
        }.joined(separator: "\n") + "\n"
    }

    @Test func aSampleTheStoreRefusesInALaterBatchNamesItsLineAndStoresNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        let file = directory.appendingPathComponent("big.ndjson")
        try Self.lines(count: 25_000, base: 1_700_000_000, bad: 23_456).write(
            to: file, atomically: true, encoding: .utf8)
        let result = try WearhouseRunner.run(["import-samples", "--store", store, file.path])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("big.ndjson:23456: "), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was imported"), "\(result.stderr)")
        #expect(try CrashSafetyTests.storedHeartRates(store) == 0)

        // The same file without the bad line: every batch is stored, and the WAL is checkpointed after the commit.
        try Self.lines(count: 25_000, base: 1_700_000_000).write(to: file, atomically: true, encoding: .utf8)
        let good = try WearhouseRunner.run(["import-samples", "--store", store, file.path])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.hasPrefix("25000 samples: 25000 inserted"), "\(good.stdout)")
        #expect(try CrashSafetyTests.storedHeartRates(store) == 25_000)
        let wal = (try FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? NSNumber)?.intValue
        #expect(wal == 0)
    }

    /// SIGKILL at four moments spread over an import of three batches, into a store that holds an earlier file: after
    /// each kill the store holds the earlier file and either all of the new one or none of it, and `store check`
    /// passes.
    @Test func sigkillDuringAMultiBatchImportLeavesAllOrNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-stream-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        let first = directory.appendingPathComponent("first.ndjson")
        try Self.lines(count: 100, base: 1_600_000_000).write(to: first, atomically: true, encoding: .utf8)
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, first.path]).status == 0)
        let big = directory.appendingPathComponent("big.ndjson")
        let count = 22_000
        try Self.lines(count: count, base: 1_700_000_000).write(to: big, atomically: true, encoding: .utf8)

        // How long a whole import takes here (into a store of its own), to spread the kills over it.
        let clock = ContinuousClock()
        let started = clock.now
        let timing = try WearhouseRunner.run([
            "import-samples", "--store", directory.appendingPathComponent("timing.db").path, big.path,
        ])
        #expect(timing.status == 0, "\(timing.stderr)")
        let whole = clock.now - started
        let microseconds = Double(whole.components.seconds) * 1e6 + Double(whole.components.attoseconds) * 1e-12
        var killed = 0
        for fraction in [0.2, 0.45, 0.7, 0.9] {
            let process = try WearhouseRunner.start(["import-samples", "--store", store, big.path])
            usleep(UInt32(microseconds * fraction))
            process.signal(SIGKILL)
            if !process.wait().exited { killed += 1 }
            let stored = try CrashSafetyTests.storedHeartRates(store)
            #expect(stored == 100 || stored == 100 + count, "after a kill at \(fraction): \(stored) samples")
        }
        #expect(killed >= 2, "most kills should land during the import (killed \(killed) of 4)")
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, big.path]).status == 0)
        #expect(try CrashSafetyTests.storedHeartRates(store) == 100 + count)
    }
}
