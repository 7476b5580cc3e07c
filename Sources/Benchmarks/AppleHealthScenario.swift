import Foundation
import TestSupport

/// `apple-health`: `wearhouse import-samples export.xml` of a generated Apple Health export
/// (`Tests/Support/AppleHealthExportGenerator.swift`: 36 record types from ten sources, heart rate variability
/// beats, blood pressure and food correlations, workouts with events, statistics and GPX routes, activity
/// summaries, `Me`, clinical records and audiograms), side by side with healthkit-to-sqlite (PyPI, the tool people
/// use for the same file today; `make bench` installs the pinned version into `.venv`) on the same file, each into
/// a fresh database; then the same export zipped, through `wearhouse import-samples export.zip`. The full run's
/// largest export is 1 GB; peak RSS must stay at most 64 MB and flat from the small export to the large.
enum AppleHealthScenario {
    /// Where `make bench` puts healthkit-to-sqlite (Makefile, `$(VENV)/.healthkit`).
    static let peer = ".venv/bin/healthkit-to-sqlite"

    static func run(size: BenchSize) async throws -> BenchReport {
        let sizes: [Int64] = size.pick(
            full: [100_000_000, 1_000_000_000], quick: [10_000_000, 100_000_000], smoke: [1_000_000])
        guard FileManager.default.isExecutableFile(atPath: peer) else {
            throw ReplayScenario.BenchError(
                "no healthkit-to-sqlite at \(peer): `make bench` (or `make .venv/.healthkit`) installs it")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-apple-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wearhouse = try Peers.wearhouse
        var rows: [BenchRow] = []
        var memory: [BenchRow] = []
        var notes: [String] = []
        for bytes in sizes {
            let days = try AppleHealthExportGenerator.days(forBytes: bytes)
            let root = directory.appendingPathComponent("export-\(days)/apple_health_export")
            let written = try AppleHealthExportGenerator.write(days: days, to: root)
            let xml = root.appendingPathComponent("export.xml").path
            let label = "\(written.bytes / 1_000_000) MB, \(written.records) records"

            let store = directory.appendingPathComponent("health-\(days).db").path
            let ours = try Peers.measure(wearhouse, ["import-samples", xml, "--store", store])
            try check(ours.output, written, xml)
            try removeStore(store)

            let peerDatabase = directory.appendingPathComponent("peer-\(days).db").path
            let theirs = try Peers.measure(peer, [xml, peerDatabase, "--xml", "--silent"])
            try? FileManager.default.removeItem(atPath: peerDatabase)

            let zip = directory.appendingPathComponent("export-\(days).zip").path
            _ = try Peers.measure("/usr/bin/python3", ["-m", "zipfile", "-c", zip, root.path])
            let zipBytes = (try FileManager.default.attributesOfItem(atPath: zip)[.size] as? NSNumber)?.int64Value ?? 0
            let zipped = try Peers.measure(wearhouse, ["import-samples", zip, "--store", store])
            try check(zipped.output, written, zip)
            try removeStore(store)
            try? FileManager.default.removeItem(atPath: zip)
            try? FileManager.default.removeItem(at: root.deletingLastPathComponent())

            let records = Double(written.records)
            rows.append(
                BenchRow(
                    subject: "wearhouse import-samples export.xml, \(label)", unit: "records/s",
                    runs: [records / ours.seconds]))
            rows.append(
                BenchRow(
                    subject: "healthkit-to-sqlite export.xml, \(label)", unit: "records/s",
                    runs: [records / theirs.seconds]))
            rows.append(
                BenchRow(
                    subject: "wearhouse import-samples export.zip, \(label)", unit: "records/s",
                    runs: [records / zipped.seconds]))
            memory.append(
                BenchRow(subject: "wearhouse peak RSS, export.xml \(label)", unit: "MB", runs: [ours.peakMegabytes]))
            memory.append(
                BenchRow(subject: "wearhouse peak RSS, export.zip \(label)", unit: "MB", runs: [zipped.peakMegabytes]))
            memory.append(
                BenchRow(
                    subject: "healthkit-to-sqlite peak RSS, \(label)", unit: "MB", runs: [theirs.peakMegabytes]))
            notes.append(
                "\(label) (\(days) days; \(written.stored) samples, series, correlations and workouts stored; "
                    + "export.zip \(zipBytes / 1_000_000) MB): wearhouse "
                    + String(
                        format: "%.1f s, healthkit-to-sqlite %.1f s: %.1fx; export.zip %.1f s", ours.seconds,
                        theirs.seconds, theirs.seconds / ours.seconds, zipped.seconds))
        }
        return BenchReport(
            scenario: "apple-health", size: size, rows: rows + memory,
            notes: notes + [
                "one run per size, each into a fresh database: wearhouse's SQLite store (WAL + synchronous=FULL, the "
                    + "samples in one transaction), healthkit-to-sqlite's sqlite-utils database",
                "records/s: the export's <Record> elements over the wall time of the process, start to exit; peak RSS "
                    + "from /usr/bin/time",
                "targets: wearhouse at least 20x healthkit-to-sqlite on the 1 GB export.xml, at most 64 MB, flat",
            ])
    }

    /// Writes the generated export of about `megabytes` MB into `folder` (`export.xml`, `workout-routes/`), for
    /// measuring an import by hand; returns what was written, in words.
    static func writeExport(megabytes: Int64, to folder: String) throws -> String {
        let days = try AppleHealthExportGenerator.days(forBytes: megabytes * 1_000_000)
        let written = try AppleHealthExportGenerator.write(days: days, to: URL(fileURLWithPath: folder))
        return "\(folder)/export.xml: \(written.bytes) bytes, \(days) days, \(written.records) records, "
            + "\(written.stored) samples, series, correlations and workouts to store"
    }

    /// Throws unless `output` is an import summary that stored everything `written` holds.
    static func check(_ output: Data, _ written: AppleHealthExportGenerator.Written, _ file: String) throws {
        let text = String(decoding: output, as: UTF8.self)
        guard text.hasPrefix("\(written.stored) samples: \(written.stored) inserted") else {
            throw ReplayScenario.BenchError(
                "import-samples \(file): expected \(written.stored) inserted, got \(text.prefix(400))")
        }
    }

    static func removeStore(_ path: String) throws {
        for suffix in ["", "-wal", "-shm", "-access", "-access-wal", "-access-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
