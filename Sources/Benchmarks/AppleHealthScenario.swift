import Foundation

/// `apple-health`: `wearhouse import-samples export.zip` of synthetic Apple Health exports at three sizes (the
/// largest 1 GB-class in the full run), each a fresh SQLite store: the rate in records per second and the peak
/// resident memory, which must stay flat as the export grows (the zip is read in place and streamed,
/// docs/apple-health-import.md). The records are what a watch and a phone write most: heart rates with their
/// motion-context metadata and step counts, each with the device text of a real export.
enum AppleHealthScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let counts = size.pick(
            full: [300_000, 1_000_000, 3_000_000], quick: [30_000, 100_000, 300_000], smoke: [1_000, 3_000, 10_000])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-apple-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wearhouse = try Peers.wearhouse
        var rates: [BenchRow] = []
        var memory: [BenchRow] = []
        var notes: [String] = []
        for count in counts {
            let root = directory.appendingPathComponent("export-\(count)/apple_health_export")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let xml = root.appendingPathComponent("export.xml").path
            let bytes = try write(records: count, to: xml)
            let zip = directory.appendingPathComponent("export-\(count).zip").path
            _ = try Peers.measure("/usr/bin/python3", ["-m", "zipfile", "-c", zip, root.path])
            try FileManager.default.removeItem(atPath: xml)
            let store = directory.appendingPathComponent("health-\(count).db").path
            let ours = try Peers.measure(wearhouse, ["import-samples", zip, "--store", store])
            let output = String(decoding: ours.output, as: UTF8.self)
            guard output.hasPrefix("\(count) samples: \(count) inserted") else {
                throw ReplayScenario.BenchError("import-samples \(zip): \(output.prefix(400))")
            }
            let zipBytes = (try FileManager.default.attributesOfItem(atPath: zip)[.size] as? NSNumber)?.int64Value ?? 0
            rates.append(
                BenchRow(
                    subject: "wearhouse import-samples export.zip, \(count) records", unit: "records/s",
                    runs: [Double(count) / ours.seconds]))
            memory.append(
                BenchRow(
                    subject: "wearhouse peak RSS, \(count) records", unit: "MB", runs: [ours.peakMegabytes]))
            notes.append(
                "\(count) records: export.xml \(bytes / 1_000_000) MB, export.zip \(zipBytes / 1_000_000) MB, "
                    + String(format: "%.1f s", ours.seconds))
            try? FileManager.default.removeItem(atPath: zip)
            try? FileManager.default.removeItem(atPath: store)
        }
        return BenchReport(
            scenario: "apple-health", size: size, rows: rates + memory,
            notes: notes + [
                "records alternate heart rates (with HKMetadataKeyHeartRateMotionContext) and step counts, each with a device text, as a real export writes them; zipped by python3 -m zipfile (deflate)",
                "one run per size into a fresh store, WAL + synchronous=FULL; the samples in one transaction",
                "wall time of the process from start to exit; peak RSS from /usr/bin/time",
                "target: peak RSS flat (within a few MB) from the smallest size to the largest",
            ])
    }

    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        ]>
        <HealthData locale="en_GB">
         <ExportDate value="2025-01-01 09:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-06-15" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet"/>

        """

    /// An export of `records` records, 30 s apart, written in pieces; its size in bytes.
    static func write(records: Int, to path: String) throws -> Int64 {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let watch =
            "&lt;&lt;HKDevice: 0x283ab7890&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, "
            + "hardware:Watch6,1, software:9.1&gt;"
        var text = header
        var written: Int64 = 0
        for index in 0..<records {
            let second = SampleFiles.start + Int64(index) * 30
            let start = time(second)
            if index % 2 == 0 {
                text +=
                    " <Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"Ann’s Apple Watch\" "
                    + "sourceVersion=\"9.1\" device=\"\(watch)\" unit=\"count/min\" creationDate=\"\(start)\" "
                    + "startDate=\"\(start)\" endDate=\"\(start)\" value=\"\(55 + index % 60)\">\n"
                    + "  <MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(index % 3)\"/>\n"
                    + " </Record>\n"
            } else {
                text +=
                    " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Ann’s Apple Watch\" "
                    + "sourceVersion=\"9.1\" device=\"\(watch)\" unit=\"count\" creationDate=\"\(time(second + 30))\" "
                    + "startDate=\"\(start)\" endDate=\"\(time(second + 29))\" value=\"\(index % 80)\"/>\n"
            }
            if text.utf8.count > 1 << 20 {
                file.write(Data(text.utf8))
                written += Int64(text.utf8.count)
                text = ""
            }
        }
        text += "</HealthData>\n"
        file.write(Data(text.utf8))
        written += Int64(text.utf8.count)
        try file.close()
        return written
    }

    /// `yyyy-MM-dd HH:mm:ss +0000` for seconds since the epoch.
    static func time(_ seconds: Int64) -> String {
        let iso = SampleFiles.iso(seconds)  // YYYY-MM-DDTHH:MM:SSZ
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + " +0000"
    }
}
