public import Foundation
internal import Support

/// A synthetic Apple Health export in the real format, written as the Health app writes one: the DTD header,
/// `<ExportDate>`, `<Me>`, then the records grouped by type (each type's days in order), the correlations, the
/// workouts, the activity summaries, a few clinical records and audiograms, and each outdoor workout's GPX route
/// in `workout-routes/` beside `export.xml`. One person's `days` days from 2019-01-01 in Europe/London (the offsets
/// change with summer time): what a watch, a phone, a ring, a scale, a cuff, a glucose meter and a few apps write,
/// over 36 record types (the catalog's and ten it lacks, which the import counts as not imported), with device
/// texts whose object address changes from record to record as in a real export, metadata of every kind,
/// heart rate variability records with their beats, blood pressure and food correlations whose records also
/// stand alone (as the DTD's note says), workouts with events, statistics, metadata and routes.
///
/// The same `days` and `seed` give the same bytes. ``Written`` tells what an import must find: for the benchmark
/// (`Sources/Benchmarks/AppleHealthScenario.swift`) and the tests.
public enum AppleHealthExportGenerator {
    /// What was written, and what `wearhouse import-samples` must make of it.
    public struct Written: Sendable {
        /// The size of `export.xml`.
        public var bytes: Int64 = 0
        /// `<Record>` elements, top-level and inside correlations.
        public var records = 0
        /// What the import sends to the store, by the catalog's type identifier (samples, heartbeat series,
        /// correlations, workouts), as its summary's `by type:` lines count them.
        public var read: [String: Int] = [:]
        /// Records of types the catalog lacks, by their HealthKit identifier.
        public var notInCatalog: [String: Int] = [:]
        public var correlations = 0
        public var workouts = 0
        public var routeFiles = 0
        public var routeLocations = 0
        public var activitySummaries = 0
        public var clinicalRecords = 0
        public var audiograms = 0

        /// The objects the store gets: every sample, series, correlation and workout (the first number of the
        /// import's summary).
        public var stored: Int {
            read.filter { !Self.characteristics.contains($0.key) }.values.reduce(0, +)
        }

        /// The characteristics of `<Me>` (in ``read``, not stored as samples).
        public static let characteristics: Set = ["dateOfBirth", "biologicalSex", "bloodType", "fitzpatrickSkinType"]
    }

    /// The first day: 2019-01-01 00:00 UTC, in seconds since the epoch.
    public static let firstDay: Int64 = 1_546_300_800

    /// Writes `directory/export.xml` (and `directory/workout-routes/*.gpx` when `routes`).
    public static func write(days: Int, seed: UInt64 = 1, to directory: URL, routes: Bool = true) throws -> Written {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("export.xml").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let sink = Sink(file: try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
        let generator = Generator(sink: sink, days: days, seed: seed)
        if routes {
            let folder = directory.appendingPathComponent("workout-routes")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            generator.routeFolder = folder
        }
        try generator.run()
        try sink.finish()
        generator.written.bytes = sink.total
        return generator.written
    }

    /// The size `export.xml` of `days` days would have, without writing it (generated into nothing).
    public static func bytes(days: Int, seed: UInt64 = 1) throws -> Int64 {
        let sink = Sink(file: nil)
        let generator = Generator(sink: sink, days: days, seed: seed)
        try generator.run()
        try sink.finish()
        return sink.total
    }

    /// How many days make an `export.xml` of about `bytes` bytes (at least one).
    public static func days(forBytes bytes: Int64, seed: UInt64 = 1) throws -> Int {
        let sample = 56
        let perDay = try Self.bytes(days: sample, seed: seed) / Int64(sample)
        return max(1, Int(bytes / max(perDay, 1)))
    }

    /// The DTD of an export of HealthKit Export Version 13, as the Health app writes it (the elements read here).
    public static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT ExportDate EMPTY>
        <!ATTLIST ExportDate
          value CDATA #REQUIRED
        >
        <!ELEMENT Me EMPTY>
        <!ATTLIST Me
          HKCharacteristicTypeIdentifierDateOfBirth                 CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBiologicalSex               CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBloodType                   CDATA #REQUIRED
          HKCharacteristicTypeIdentifierFitzpatrickSkinType         CDATA #REQUIRED
          HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse CDATA #REQUIRED
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
        <!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
        <!ELEMENT Correlation ((MetadataEntry|Record)*)>
        <!ATTLIST Correlation
          type          CDATA #REQUIRED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
        <!ATTLIST Workout
          workoutActivityType   CDATA #REQUIRED
          duration              CDATA #IMPLIED
          durationUnit          CDATA #IMPLIED
          totalDistance         CDATA #IMPLIED
          totalDistanceUnit     CDATA #IMPLIED
          totalEnergyBurned     CDATA #IMPLIED
          totalEnergyBurnedUnit CDATA #IMPLIED
          sourceName            CDATA #REQUIRED
          sourceVersion         CDATA #IMPLIED
          device                CDATA #IMPLIED
          creationDate          CDATA #IMPLIED
          startDate             CDATA #REQUIRED
          endDate               CDATA #REQUIRED
        >
        <!ELEMENT WorkoutEvent EMPTY>
        <!ATTLIST WorkoutEvent
          type         CDATA #REQUIRED
          date         CDATA #REQUIRED
          duration     CDATA #IMPLIED
          durationUnit CDATA #IMPLIED
        >
        <!ELEMENT WorkoutStatistics EMPTY>
        <!ATTLIST WorkoutStatistics
          type      CDATA #REQUIRED
          startDate CDATA #REQUIRED
          endDate   CDATA #REQUIRED
          average   CDATA #IMPLIED
          minimum   CDATA #IMPLIED
          maximum   CDATA #IMPLIED
          sum       CDATA #IMPLIED
          unit      CDATA #IMPLIED
        >
        <!ELEMENT WorkoutRoute ((MetadataEntry|FileReference)*)>
        <!ATTLIST WorkoutRoute
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT FileReference EMPTY>
        <!ATTLIST FileReference
          path CDATA #REQUIRED
        >
        <!ELEMENT ActivitySummary EMPTY>
        <!ATTLIST ActivitySummary
          dateComponents           CDATA #IMPLIED
          activeEnergyBurned       CDATA #IMPLIED
          activeEnergyBurnedGoal   CDATA #IMPLIED
          activeEnergyBurnedUnit   CDATA #IMPLIED
          appleMoveTime            CDATA #IMPLIED
          appleMoveTimeGoal        CDATA #IMPLIED
          appleExerciseTime        CDATA #IMPLIED
          appleExerciseTimeGoal    CDATA #IMPLIED
          appleStandHours          CDATA #IMPLIED
          appleStandHoursGoal      CDATA #IMPLIED
        >
        <!ELEMENT MetadataEntry EMPTY>
        <!ATTLIST MetadataEntry
          key   CDATA #REQUIRED
          value CDATA #REQUIRED
        >
        <!-- Note: Heart Rate Variability records captured by Apple Watch may include an associated list of instantaneous beats-per-minute readings. -->
        <!ELEMENT HeartRateVariabilityMetadataList (InstantaneousBeatsPerMinute*)>
        <!ELEMENT InstantaneousBeatsPerMinute EMPTY>
        <!ATTLIST InstantaneousBeatsPerMinute
          bpm  CDATA #REQUIRED
          time CDATA #REQUIRED
        >
        <!ELEMENT ClinicalRecord EMPTY>
        <!ATTLIST ClinicalRecord
          type              CDATA #REQUIRED
          identifier        CDATA #REQUIRED
          sourceName        CDATA #REQUIRED
          sourceURL         CDATA #REQUIRED
          fhirVersion       CDATA #REQUIRED
          receivedDate      CDATA #REQUIRED
          resourceFilePath  CDATA #REQUIRED
        >
        <!ELEMENT Audiogram (SensitivityPoint*)>
        <!ATTLIST Audiogram
          type          CDATA #REQUIRED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT SensitivityPoint EMPTY>
        <!ATTLIST SensitivityPoint
          frequencyValue CDATA #REQUIRED
          frequencyUnit  CDATA #REQUIRED
          leftEarValue   CDATA #IMPLIED
          leftEarUnit    CDATA #IMPLIED
          rightEarValue  CDATA #IMPLIED
          rightEarUnit   CDATA #IMPLIED
        >
        ]>

        """

    /// Where the bytes go: a file, in pieces of about a megabyte, or nowhere (only counted).
    final class Sink {
        let file: FileHandle?
        var buffer: [UInt8] = []
        var total: Int64 = 0

        init(file: FileHandle?) {
            self.file = file
            buffer.reserveCapacity(1 << 21)
        }

        @inline(__always) func put(_ text: StaticString) {
            buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        @inline(__always) func put(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

        @inline(__always) func put(byte: UInt8) { buffer.append(byte) }

        func put(string: String) { buffer.append(contentsOf: string.utf8) }

        /// A non-negative integer in decimal.
        func put(int value: Int) {
            if value < 0 {
                buffer.append(UInt8(ascii: "-"))
                put(int: -value)
                return
            }
            if value >= 10 { put(int: value / 10) }
            buffer.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
        }

        /// `value / 10^decimals` with exactly `decimals` digits after the point (none when 0).
        func put(fixed value: Int, decimals: Int) {
            guard decimals > 0 else { return put(int: value) }
            var scale = 1
            for _ in 0..<decimals { scale *= 10 }
            put(int: value / scale)
            buffer.append(UInt8(ascii: "."))
            var digit = scale / 10
            let rest = value % scale
            while digit > 0 {
                buffer.append(UInt8(truncatingIfNeeded: 0x30 + rest / digit % 10))
                digit /= 10
            }
        }

        /// Two digits, zero-padded.
        @inline(__always) func put(two value: Int) {
            buffer.append(UInt8(truncatingIfNeeded: 0x30 + value / 10))
            buffer.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
        }

        /// A hexadecimal number, lower case.
        func put(hex value: UInt64) {
            if value >= 16 { put(hex: value / 16) }
            let digit = UInt8(truncatingIfNeeded: value % 16)
            buffer.append(digit < 10 ? 0x30 + digit : 0x61 + digit - 10)
        }

        func flushIfFull() throws {
            if buffer.count >= 1 << 20 { try flush() }
        }

        func flush() throws {
            total += Int64(buffer.count)
            try file?.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }

        func finish() throws {
            try flush()
            try file?.close()
        }
    }
}

/// The writer of one export (``AppleHealthExportGenerator``).
private final class Generator {
    let sink: AppleHealthExportGenerator.Sink
    let days: Int
    let seed: UInt64
    var routeFolder: URL?
    var written = AppleHealthExportGenerator.Written()

    init(sink: AppleHealthExportGenerator.Sink, days: Int, seed: UInt64) {
        self.sink = sink
        self.days = days
        self.seed = seed
    }

    // MARK: - Who writes

    /// A source: its name, version and device text by the day (they change as the person updates and replaces
    /// things).
    struct Writer {
        var name: [UInt8]
        var versions: [String]
        /// `name:..., manufacturer:..., ...` of each era; `nil` for a source that writes no device.
        var devices: [String]?
        /// Days an era lasts.
        var era: Int

        func version(_ day: Int) -> [UInt8] { Array(versions[min(day / era, versions.count - 1)].utf8) }

        func device(_ day: Int) -> [UInt8]? {
            guard let devices else { return nil }
            return Array(devices[min(day / era, devices.count - 1)].utf8)
        }
    }

    static let watch = Writer(
        name: Array("Ann’s Apple Watch".utf8), versions: ["7.3", "8.5", "9.1", "10.2", "10.4", "11.0"],
        devices: [
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch5,4, software:7.3",
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:8.5",
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1",
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch7,3, software:10.2",
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch7,3, software:10.4",
            "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch7,3, software:11.0",
        ], era: 300)
    static let phone = Writer(
        name: Array("Ann’s iPhone".utf8), versions: ["14.4", "15.2", "16.1", "17.0", "17.4", "18.0"],
        devices: [
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone12,1, software:14.4",
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone12,1, software:15.2",
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:16.1",
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:17.0",
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,3, software:17.4",
            "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,3, software:18.0",
        ], era: 300)
    static let ring = Writer(
        name: Array("Oura".utf8), versions: ["4.12.1", "5.3.0"],
        devices: ["name:Oura Ring, manufacturer:Oura Health Oy, model:Gen3, hardware:3, software:2.8.5"], era: 900)
    static let scale = Writer(
        name: Array("Withings".utf8), versions: ["5.4.2", "6.1.0"],
        devices: [
            "name:Body+, manufacturer:Withings, model:WBS05, firmware:1320, localIdentifier:00:24:e4:6a:1b:2c"
        ], era: 800)
    static let health = Writer(name: Array("Health".utf8), versions: ["14.4", "16.1", "17.4"], devices: nil, era: 600)
    static let cuff = Writer(
        name: Array("OMRON connect".utf8), versions: ["2.1"],
        devices: ["name:BP7250, manufacturer:OMRON HEALTHCARE, model:HEM-7361T, hardware:1.0, software:0.9"],
        era: 10_000)
    static let meter = Writer(
        name: Array("OneTouch Reveal".utf8), versions: ["5.8", "6.0"], devices: nil, era: 700)
    static let food = Writer(name: Array("MyFitnessPal".utf8), versions: ["21.4.0", "23.1.0"], devices: nil, era: 700)
    static let water = Writer(name: Array("WaterMinder".utf8), versions: ["5.2"], devices: nil, era: 10_000)
    static let sleepApp = Writer(name: Array("Sleep Cycle".utf8), versions: ["5.9", "6.2"], devices: nil, era: 800)

    // MARK: - Time

    /// The offset of Europe/London at `seconds` (UTC): +0100 from the last Sunday of March 01:00 UTC to the last
    /// Sunday of October 01:00 UTC.
    static func offset(at seconds: Int64) -> Int {
        let (year, _, _) = civil(days: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        func lastSunday(_ month: Int) -> Int64 {
            let last = daysFrom(year: year, month: month, day: 31)
            return (last - (last + 4) % 7) * 86_400 + 3_600
        }
        return seconds >= lastSunday(3) && seconds < lastSunday(10) ? 3_600 : 0
    }

    static func civil(days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    static func daysFrom(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `yyyy-MM-dd HH:mm:ss ±hhmm` of `seconds` in Europe/London.
    func time(_ seconds: Int64) {
        let offset = Self.offset(at: seconds)
        let local = seconds + Int64(offset)
        let (year, month, day) = Self.civil(days: local / 86_400)
        let clock = Int(local % 86_400)
        sink.put(int: year)
        sink.put(byte: 0x2D)
        sink.put(two: month)
        sink.put(byte: 0x2D)
        sink.put(two: day)
        sink.put(byte: 0x20)
        sink.put(two: clock / 3_600)
        sink.put(byte: 0x3A)
        sink.put(two: clock / 60 % 60)
        sink.put(byte: 0x3A)
        sink.put(two: clock % 60)
        sink.put(offset >= 0 ? " +" : " -")
        sink.put(two: abs(offset) / 3_600)
        sink.put(two: abs(offset) / 60 % 60)
    }

    /// A beat's time of day as the export writes it: `10:21:54.25 PM`.
    func clock(_ milliseconds: Int64) {
        let local = milliseconds + Int64(Self.offset(at: milliseconds / 1_000)) * 1_000
        let ofDay = Int(local % 86_400_000)
        let hour = ofDay / 3_600_000
        sink.put(int: hour % 12 == 0 ? 12 : hour % 12)
        sink.put(byte: 0x3A)
        sink.put(two: ofDay / 60_000 % 60)
        sink.put(byte: 0x3A)
        sink.put(two: ofDay / 1_000 % 60)
        sink.put(byte: 0x2E)
        sink.put(two: ofDay / 10 % 100)
        sink.put(hour < 12 ? " AM" : " PM")
    }

    // MARK: - Elements

    /// The randomness of one stream on one day, the same whichever order they are written in.
    func random(_ stream: UInt64, _ day: Int) -> SplitMix64 {
        SplitMix64(seed: SplitMix64.mix(seed &* 0x9E37_79B9 ^ stream << 32 ^ UInt64(day)))
    }

    func dayStart(_ day: Int) -> Int64 { AppleHealthExportGenerator.firstDay + Int64(day) * 86_400 }

    /// ` sourceName=".." sourceVersion=".." device=".."` of `writer` on `day`; a new object address each time.
    func source(_ writer: Writer, _ day: Int, _ random: inout SplitMix64) {
        sink.put(" sourceName=\"")
        sink.put(writer.name)
        sink.put("\" sourceVersion=\"")
        sink.put(writer.version(day))
        sink.put(byte: 0x22)
        if let device = writer.device(day) {
            sink.put(" device=\"&lt;&lt;HKDevice: 0x28")
            sink.put(hex: 0x1_0000_000 + random.next() % 0xF_0000_000)
            sink.put("&gt;, ")
            sink.put(device)
            sink.put("&gt;\"")
        }
    }

    /// A record's value: a number with `decimals` places, or a category value's name.
    enum Value {
        case fixed(Int, decimals: Int)
        case category(StaticString)
    }

    /// The opening of a `<Record>` up to its value; `close` is `/>` or `>` (children follow).
    func recordHead(
        _ type: StaticString, _ writer: Writer, _ day: Int, unit: StaticString?, start: Int64, end: Int64,
        value: Value, indent: StaticString = " ", _ random: inout SplitMix64
    ) {
        sink.put(indent)
        sink.put("<Record type=\"")
        sink.put(type)
        sink.put(byte: 0x22)
        source(writer, day, &random)
        if let unit {
            sink.put(" unit=\"")
            sink.put(unit)
            sink.put(byte: 0x22)
        }
        sink.put(" creationDate=\"")
        time(end + 1 + Int64(random.next() % 600))
        sink.put("\" startDate=\"")
        time(start)
        sink.put("\" endDate=\"")
        time(end)
        sink.put("\" value=\"")
        switch value {
        case .fixed(let number, let decimals): sink.put(fixed: number, decimals: decimals)
        case .category(let name): sink.put(name)
        }
        sink.put(byte: 0x22)
    }

    func metadata(_ key: StaticString, _ value: StaticString, indent: StaticString = "  ") {
        sink.put(indent)
        sink.put("<MetadataEntry key=\"")
        sink.put(key)
        sink.put("\" value=\"")
        sink.put(value)
        sink.put("\"/>\n")
    }

    /// An entry whose value is a new UUID (an app's own identifier of the sample).
    func metadata(_ key: StaticString, uuid random: inout SplitMix64) {
        sink.put("  <MetadataEntry key=\"")
        sink.put(key)
        sink.put("\" value=\"")
        let high = random.next()
        let low = random.next()
        for (index, shift) in stride(from: 60, through: 0, by: -4).enumerated() {
            if index == 8 || index == 12 { sink.put(byte: 0x2D) }
            sink.put(hex: high >> UInt64(shift) & 0xF)
        }
        for (index, shift) in stride(from: 60, through: 0, by: -4).enumerated() {
            if index == 0 || index == 4 { sink.put(byte: 0x2D) }
            sink.put(hex: low >> UInt64(shift) & 0xF)
        }
        sink.put("\"/>\n")
    }

    func metadata(_ key: StaticString, int value: Int, indent: StaticString = "  ") {
        sink.put(indent)
        sink.put("<MetadataEntry key=\"")
        sink.put(key)
        sink.put("\" value=\"")
        sink.put(int: value)
        sink.put("\"/>\n")
    }

    /// One record of a catalog type (`identifier`) or of one the catalog lacks (`identifier` nil), with the
    /// metadata `more` writes.
    func record(
        _ type: StaticString, _ identifier: String?, _ writer: Writer, _ day: Int, unit: StaticString?,
        start: Int64, end: Int64, value: Value, _ random: inout SplitMix64,
        metadata more: ((inout SplitMix64) -> Void)? = nil
    ) {
        recordHead(type, writer, day, unit: unit, start: start, end: end, value: value, &random)
        if let more {
            sink.put(">\n")
            more(&random)
            sink.put(" </Record>\n")
        } else {
            sink.put("/>\n")
        }
        written.records += 1
        if let identifier {
            written.read[identifier, default: 0] += 1
        } else {
            written.notInCatalog["\(type)", default: 0] += 1
        }
    }

    /// Records of one type and writer over every day: `make` gives each day's (start, end, value) list.
    func stream(
        _ number: UInt64, _ type: StaticString, _ identifier: String?, _ writer: Writer, unit: StaticString?,
        every make: (Int64, inout SplitMix64) -> [(Int64, Int64, Value)],
        metadata more: ((inout SplitMix64) -> Void)? = nil
    ) throws {
        for day in 0..<days {
            var random = random(number, day)
            for (start, end, value) in make(dayStart(day), &random) {
                record(
                    type, identifier, writer, day, unit: unit, start: start, end: end, value: value, &random,
                    metadata: more)
            }
            try sink.flushIfFull()
        }
    }

    /// Intervals that tile the waking day (07:00-23:00 UTC) with gaps: `count` of them, each 1-10 minutes.
    static func intervals(_ dayStart: Int64, _ count: Int, _ random: inout SplitMix64) -> [(Int64, Int64)] {
        var result: [(Int64, Int64)] = []
        var cursor = dayStart + 7 * 3_600
        let slot = Int64(16 * 3_600 / max(count, 1))
        for _ in 0..<count {
            let length = Int64(60 + random.next() % 540)
            let start = cursor + Int64(random.next() % UInt64(max(slot - length, 1)))
            result.append((start, start + min(length, slot - 1)))
            cursor += slot
        }
        return result
    }

    /// Instants `every` seconds apart (±`jitter`) from `from` to `to` after the day's start.
    static func instants(
        _ dayStart: Int64, from: Int64, to: Int64, every: Int64, jitter: Int64, _ random: inout SplitMix64
    )
        -> [Int64]
    {
        stride(from: dayStart + from, to: dayStart + to, by: Int(every)).map {
            $0 + Int64(random.next() % UInt64(jitter + 1))
        }
    }

    // MARK: - The export

    func run() throws {
        sink.put(string: AppleHealthExportGenerator.header)
        sink.put("<HealthData locale=\"en_GB\">\n <ExportDate value=\"")
        time(dayStart(days) + 9 * 3_600)
        sink.put("\"/>\n")
        sink.put(
            string: " <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1985-06-15\" "
                + "HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexFemale\" "
                + "HKCharacteristicTypeIdentifierBloodType=\"HKBloodTypeONegative\" "
                + "HKCharacteristicTypeIdentifierFitzpatrickSkinType=\"HKFitzpatrickSkinTypeIII\" "
                + "HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=\"HKCardioFitnessMedicationsUseNone\"/>\n")
        for key in AppleHealthExportGenerator.Written.characteristics { written.read[key] = 1 }
        try records()
        try correlations()
        try workouts()
        try summaries()
        try clinical()
        sink.put("</HealthData>\n")
    }

    func records() throws {
        let watch = Self.watch
        let phone = Self.phone
        // Heart rate: the watch every 5 minutes (motion context on most), the ring at night every 5 minutes.
        try stream(1, "HKQuantityTypeIdentifierHeartRate", "heartRate", watch, unit: "count/min") { day, random in
            Self.instants(day, from: 0, to: 86_400, every: 300, jitter: 120, &random).map {
                ($0, $0, .fixed(52 + Int(random.next() % 80), decimals: 0))
            }
        } metadata: { [self] random in
            metadata("HKMetadataKeyHeartRateMotionContext", int: Int(random.next() % 3))
        }
        try stream(2, "HKQuantityTypeIdentifierHeartRate", "heartRate", Self.ring, unit: "count/min") { day, random in
            Self.instants(day, from: -3_600, to: 6 * 3_600, every: 300, jitter: 0, &random).map {
                ($0, $0 + 60, .fixed(4_800 + Int(random.next() % 1_500), decimals: 2))
            }
        }
        // Steps and distance from the phone and the watch, energy from the watch.
        for (number, writer, count) in [(UInt64(3), phone, 90), (4, watch, 130)] {
            try stream(number, "HKQuantityTypeIdentifierStepCount", "stepCount", writer, unit: "count") { day, random in
                Self.intervals(day, count, &random).map {
                    ($0.0, $0.1, .fixed(10 + Int(random.next() % 900), decimals: 0))
                }
            }
            try stream(
                number + 10, "HKQuantityTypeIdentifierDistanceWalkingRunning", "distanceWalkingRunning", writer,
                unit: "km"
            ) { day, random in
                Self.intervals(day, count, &random).map {
                    ($0.0, $0.1, .fixed(5_000 + Int(random.next() % 600_000), decimals: 7))
                }
            }
        }
        try stream(5, "HKQuantityTypeIdentifierActiveEnergyBurned", "activeEnergyBurned", watch, unit: "Cal") {
            day, random in
            Self.intervals(day, 300, &random).map { ($0.0, $0.1, .fixed(Int(random.next() % 9_000), decimals: 3)) }
        }
        try stream(6, "HKQuantityTypeIdentifierBasalEnergyBurned", "basalEnergyBurned", watch, unit: "Cal") {
            day, random in
            Self.intervals(day, 200, &random).map {
                ($0.0, $0.1, .fixed(500 + Int(random.next() % 4_000), decimals: 3))
            }
        }
        try stream(7, "HKQuantityTypeIdentifierFlightsClimbed", "flightsClimbed", phone, unit: "count") {
            day, random in
            Self.intervals(day, 8, &random).map { ($0.0, $0.1, .fixed(1 + Int(random.next() % 4), decimals: 0)) }
        }
        try stream(8, "HKQuantityTypeIdentifierAppleExerciseTime", "appleExerciseTime", watch, unit: "min") {
            day, random in
            Self.intervals(day, 30, &random).map { ($0.0, $0.0 + 60, .fixed(1, decimals: 0)) }
        }
        try stream(9, "HKQuantityTypeIdentifierRestingHeartRate", "restingHeartRate", watch, unit: "count/min") {
            day, random in
            [(day + 8 * 3_600, day + 23 * 3_600, .fixed(50 + Int(random.next() % 15), decimals: 0))]
        }
        try stream(
            10, "HKQuantityTypeIdentifierWalkingHeartRateAverage", "walkingHeartRateAverage", watch, unit: "count/min"
        ) { day, random in
            [(day + 8 * 3_600, day + 22 * 3_600, .fixed(90 + Int(random.next() % 25), decimals: 0))]
        }
        try heartRateVariability()
        try stream(15, "HKQuantityTypeIdentifierOxygenSaturation", "oxygenSaturation", watch, unit: "%") {
            day, random in
            Self.instants(day, from: 0, to: 86_400, every: 10_800, jitter: 600, &random).map {
                ($0, $0, .fixed(94 + Int(random.next() % 7), decimals: 2))
            }
        }
        try stream(16, "HKQuantityTypeIdentifierRespiratoryRate", "respiratoryRate", watch, unit: "count/min") {
            day, random in
            Self.instants(day, from: -3_600, to: 6 * 3_600, every: 600, jitter: 60, &random).map {
                ($0, $0 + 240, .fixed(120 + Int(random.next() % 80), decimals: 1))
            }
        }
        try stream(17, "HKQuantityTypeIdentifierVO2Max", "vo2Max", watch, unit: "mL/min·kg") { day, random in
            (day / 86_400) % 7 == 3
                ? [(day + 18 * 3_600, day + 18 * 3_600, .fixed(38_000 + Int(random.next() % 8_000), decimals: 3))] : []
        } metadata: { [self] _ in
            metadata("HKVO2MaxTestType", "2")
        }
        try sleep()
        try stream(19, "HKCategoryTypeIdentifierAppleStandHour", "appleStandHour", watch, unit: nil) { day, random in
            (7..<23).map { hour in
                let start = day + Int64(hour) * 3_600
                return (
                    start, start + 3_600,
                    random.next() % 4 == 0
                        ? .category("HKCategoryValueAppleStandHourIdle")
                        : .category("HKCategoryValueAppleStandHourStood")
                )
            }
        }
        try body()
        try stream(
            30, "HKQuantityTypeIdentifierBloodGlucose", "bloodGlucose", Self.meter,
            unit: "mmol&lt;180.1558800000541&gt;/L"
        ) {
            day, random in
            [7, 13, 19].map { hour in
                let at = day + Int64(hour) * 3_600 + Int64(random.next() % 1_800)
                return (at, at, .fixed(40 + Int(random.next() % 50), decimals: 1))
            }
        } metadata: { [self] random in
            metadata("HKBloodGlucoseMealTime", int: 1 + Int(random.next() % 2))
            metadata("HKExternalUUID", uuid: &random)
        }
        try bloodPressureRecords()
        try foodRecords()
        try stream(33, "HKQuantityTypeIdentifierDietaryWater", "dietaryWater", Self.water, unit: "mL") { day, random in
            Self.instants(day, from: 8 * 3_600, to: 21 * 3_600, every: 7_200, jitter: 900, &random).map {
                ($0, $0, .fixed(150 + Int(random.next() % 350), decimals: 0))
            }
        }
        try stream(34, "HKQuantityTypeIdentifierDietaryCaffeine", "dietaryCaffeine", Self.water, unit: "mg") {
            day, random in
            [
                (day + 8 * 3_600, day + 8 * 3_600, .fixed(60 + Int(random.next() % 80), decimals: 0)),
                (day + 14 * 3_600, day + 14 * 3_600, .fixed(60 + Int(random.next() % 80), decimals: 0)),
            ]
        }
        try stream(35, "HKCategoryTypeIdentifierMenstrualFlow", "menstrualFlow", Self.health, unit: nil) { day, _ in
            let cycle = Int(day / 86_400) % 28
            guard cycle < 5 else { return [] }
            let names: [StaticString] = [
                "HKCategoryValueMenstrualFlowMedium", "HKCategoryValueMenstrualFlowHeavy",
                "HKCategoryValueMenstrualFlowMedium", "HKCategoryValueMenstrualFlowLight",
                "HKCategoryValueMenstrualFlowLight",
            ]
            return [(day, day + 86_400, .category(names[cycle]))]
        } metadata: { [self] _ in
            metadata("HKMenstrualCycleStart", "0")
            metadata("HKWasUserEntered", "1")
        }
        // Types the catalog lacks: the import counts them as not imported.
        try stream(40, "HKQuantityTypeIdentifierAppleStandTime", nil, watch, unit: "min") { day, random in
            Self.intervals(day, 40, &random).map { ($0.0, $0.0 + 60, .fixed(1, decimals: 0)) }
        }
        try stream(41, "HKQuantityTypeIdentifierEnvironmentalAudioExposure", nil, watch, unit: "dBASPL") {
            day, random in
            Self.intervals(day, 30, &random).map {
                ($0.0, $0.1, .fixed(40_000 + Int(random.next() % 40_000), decimals: 3))
            }
        }
        try stream(42, "HKQuantityTypeIdentifierHeadphoneAudioExposure", nil, phone, unit: "dBASPL") { day, random in
            Self.intervals(day, 10, &random).map {
                ($0.0, $0.1, .fixed(50_000 + Int(random.next() % 30_000), decimals: 3))
            }
        }
        for (number, type, unit, base) in [
            (UInt64(43), StaticString("HKQuantityTypeIdentifierWalkingSpeed"), StaticString("km/hr"), 3_000),
            (44, "HKQuantityTypeIdentifierWalkingStepLength", "cm", 60_000),
            (45, "HKQuantityTypeIdentifierWalkingDoubleSupportPercentage", "%", 250),
            (46, "HKQuantityTypeIdentifierWalkingAsymmetryPercentage", "%", 10),
        ] {
            try stream(number, type, nil, phone, unit: unit) { day, random in
                Self.intervals(day, 20, &random).map {
                    ($0.0, $0.0 + 20, .fixed(base + Int(random.next() % 2_000), decimals: 3))
                }
            }
        }
        try stream(47, "HKCategoryTypeIdentifierMindfulSession", nil, watch, unit: nil) { day, _ in
            [(day + 12 * 3_600, day + 12 * 3_600 + 60, .category("HKCategoryValueNotApplicable"))]
        }
        try stream(48, "HKCategoryTypeIdentifierHandwashingEvent", nil, watch, unit: nil) { day, random in
            Self.intervals(day, 5, &random).map { ($0.0, $0.0 + 25, .category("HKCategoryValueNotApplicable")) }
        }
    }

    /// A few heart rate variability records a day from the watch, each with 55-80 beats a minute long.
    func heartRateVariability() throws {
        for day in 0..<days {
            var random = random(12, day)
            for hour in [1, 4, 9, 15, 21] {
                let start = dayStart(day) + Int64(hour) * 3_600 + Int64(random.next() % 1_800)
                recordHead(
                    "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", Self.watch, day, unit: "ms", start: start,
                    end: start + 60, value: .fixed(2_000 + Int(random.next() % 8_000), decimals: 3), &random)
                sink.put(">\n  <HeartRateVariabilityMetadataList>\n")
                var at = start * 1_000 + Int64(random.next() % 900)
                let beats = 55 + Int(random.next() % 25)
                for _ in 0..<beats {
                    let bpm = 55 + Int(random.next() % 30)
                    sink.put("   <InstantaneousBeatsPerMinute bpm=\"")
                    sink.put(int: bpm)
                    sink.put("\" time=\"")
                    clock(at)
                    sink.put("\"/>\n")
                    at += Int64(60_000 / bpm / 10 * 10)
                }
                sink.put("  </HeartRateVariabilityMetadataList>\n </Record>\n")
                written.records += 1
                written.read["heartRateVariabilitySDNN", default: 0] += 1
                written.read["heartbeatSeries", default: 0] += 1
            }
            try sink.flushIfFull()
        }
    }

    /// Each night from the watch (stages) and the sleep app (in bed, asleep), crossing midnight.
    func sleep() throws {
        for day in 0..<days {
            var random = random(18, day)
            let bed = dayStart(day) - 3_600 + Int64(random.next() % 3_600)
            var cursor = bed
            let stages: [StaticString] = [
                "HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepDeep",
                "HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepREM",
                "HKCategoryValueSleepAnalysisAwake",
            ]
            for index in 0..<15 {
                let length = Int64(600 + random.next() % 1_800)
                record(
                    "HKCategoryTypeIdentifierSleepAnalysis", "sleepAnalysis", Self.watch, day, unit: nil,
                    start: cursor, end: cursor + length, value: .category(stages[index % stages.count]), &random
                ) { [self] _ in
                    metadata("HKTimeZone", "Europe/London")
                }
                cursor += length
            }
            record(
                "HKCategoryTypeIdentifierSleepAnalysis", "sleepAnalysis", Self.sleepApp, day, unit: nil,
                start: bed - 600, end: cursor + 300, value: .category("HKCategoryValueSleepAnalysisInBed"), &random
            ) { [self] random in
                metadata("HKTimeZone", "Europe/London")
                metadata("HKMetadataKeySyncIdentifier", uuid: &random)
                metadata("HKMetadataKeySyncVersion", "1")
            }
            record(
                "HKCategoryTypeIdentifierSleepAnalysis", "sleepAnalysis", Self.sleepApp, day, unit: nil,
                start: bed + 900, end: cursor, value: .category("HKCategoryValueSleepAnalysisAsleep"), &random)
            try sink.flushIfFull()
        }
    }

    /// The scale each morning (mass, fat, BMI, lean mass), a weekly mass and temperature entered by hand in pounds
    /// and Fahrenheit, and a height now and then.
    func body() throws {
        for (number, type, identifier, unit, base, spread, decimals) in [
            (
                UInt64(20), StaticString("HKQuantityTypeIdentifierBodyMass"), "bodyMass", StaticString("kg"), 6_200,
                300, 2
            ),
            (21, "HKQuantityTypeIdentifierBodyFatPercentage", "bodyFatPercentage", "%", 2_400, 300, 4),
            (22, "HKQuantityTypeIdentifierBodyMassIndex", "bodyMassIndex", "count", 2_100, 200, 2),
            (23, "HKQuantityTypeIdentifierLeanBodyMass", "leanBodyMass", "kg", 4_700, 200, 2),
        ] {
            try stream(number, type, identifier, Self.scale, unit: unit) { day, random in
                let at = day + 7 * 3_600 + Int64(random.next() % 1_800)
                return [(at, at, .fixed(base + Int(random.next() % UInt64(spread)), decimals: decimals))]
            } metadata: { [self] random in
                metadata("HKMetadataKeySyncIdentifier", uuid: &random)
                metadata("HKMetadataKeySyncVersion", int: 1 + Int(random.next() % 3))
            }
        }
        try stream(24, "HKQuantityTypeIdentifierBodyMass", "bodyMass", Self.health, unit: "lb") { day, random in
            (day / 86_400) % 7 == 0
                ? [(day + 20 * 3_600, day + 20 * 3_600, .fixed(1_350 + Int(random.next() % 60), decimals: 1))] : []
        } metadata: { [self] _ in
            metadata("HKWasUserEntered", "1")
        }
        try stream(25, "HKQuantityTypeIdentifierBodyTemperature", "bodyTemperature", Self.health, unit: "degF") {
            day, random in
            (day / 86_400) % 7 == 1
                ? [(day + 8 * 3_600, day + 8 * 3_600, .fixed(970 + Int(random.next() % 25), decimals: 1))] : []
        } metadata: { [self] _ in
            metadata("HKWasUserEntered", "1")
            metadata("HKBodyTemperatureSensorLocation", "9")
        }
        try stream(26, "HKQuantityTypeIdentifierHeight", "height", Self.health, unit: "ft") { day, _ in
            (day / 86_400) % 365 == 10 ? [(day + 9 * 3_600, day + 9 * 3_600, .fixed(5_577, decimals: 3))] : []
        }
    }

    /// The cuff's reading `reading` (0 in the morning, 1 in the evening) of `day`: when, diastolic, systolic.
    func pressure(_ day: Int, _ reading: Int) -> (Int64, Int, Int) {
        var random = random(31 + UInt64(reading) << 8, day)
        let at = dayStart(day) + Int64(reading == 0 ? 7 : 21) * 3_600 + Int64(random.next() % 1_200)
        let diastolic = 70 + Int(random.next() % 20)
        return (at, diastolic, diastolic + 35 + Int(random.next() % 15))
    }

    /// The cuff's readings, twice a day: the member records standing alone (the correlations repeat them).
    func bloodPressureRecords() throws {
        for (type, identifier) in [
            (StaticString("HKQuantityTypeIdentifierBloodPressureDiastolic"), "bloodPressureDiastolic"),
            ("HKQuantityTypeIdentifierBloodPressureSystolic", "bloodPressureSystolic"),
        ] {
            for day in 0..<days {
                var random = random(identifier == "bloodPressureSystolic" ? 51 : 50, day)
                for reading in 0..<2 {
                    let (at, diastolic, systolic) = pressure(day, reading)
                    let value = identifier == "bloodPressureSystolic" ? systolic : diastolic
                    record(
                        type, identifier, Self.cuff, day, unit: "mmHg", start: at, end: at,
                        value: .fixed(value, decimals: 0), &random)
                }
                try sink.flushIfFull()
            }
        }
    }

    /// The nutrients of each meal (the food correlations repeat them): type, identifier, unit, range.
    static let nutrients: [(StaticString, String, StaticString, Int, Int)] = [
        ("HKQuantityTypeIdentifierDietaryEnergyConsumed", "dietaryEnergyConsumed", "Cal", 300, 700),
        ("HKQuantityTypeIdentifierDietaryProtein", "dietaryProtein", "g", 10, 40),
        ("HKQuantityTypeIdentifierDietaryCarbohydrates", "dietaryCarbohydrates", "g", 20, 80),
        ("HKQuantityTypeIdentifierDietaryFatTotal", "dietaryFatTotal", "g", 5, 30),
        ("HKQuantityTypeIdentifierDietarySodium", "dietarySodium", "mg", 200, 900),
    ]

    static let meals: [(StaticString, Int64)] = [("Breakfast", 8), ("Lunch", 13), ("Dinner", 19)]

    /// Meal `meal` of `day`: when it starts (it lasts 20 minutes) and each nutrient's value.
    func meal(_ day: Int, _ meal: Int) -> (Int64, [Int]) {
        var random = random(32 + UInt64(meal) << 8, day)
        let at = dayStart(day) + Self.meals[meal].1 * 3_600 + Int64(random.next() % 900)
        return (at, Self.nutrients.map { $0.3 + Int(random.next() % UInt64($0.4 - $0.3)) })
    }

    func foodRecords() throws {
        for (index, nutrient) in Self.nutrients.enumerated() {
            for day in 0..<days {
                var random = random(52 + UInt64(index) << 8, day)
                for number in 0..<Self.meals.count {
                    let (at, values) = meal(day, number)
                    let name = Self.meals[number].0
                    record(
                        nutrient.0, nutrient.1, Self.food, day, unit: nutrient.2, start: at, end: at + 1_200,
                        value: .fixed(values[index], decimals: 0), &random
                    ) { [self] _ in
                        metadata("HKFoodMeal", name)
                    }
                }
                try sink.flushIfFull()
            }
        }
    }

    func correlations() throws {
        for day in 0..<days {
            var random = random(53, day)
            for reading in 0..<2 {
                let (at, diastolic, systolic) = pressure(day, reading)
                sink.put(" <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\"")
                source(Self.cuff, day, &random)
                sink.put(" creationDate=\"")
                time(at + 30)
                sink.put("\" startDate=\"")
                time(at)
                sink.put("\" endDate=\"")
                time(at)
                sink.put("\">\n")
                metadata("HKMetadataKeyBodyPosition", "sitting")
                for (type, value) in [
                    (StaticString("HKQuantityTypeIdentifierBloodPressureDiastolic"), diastolic),
                    ("HKQuantityTypeIdentifierBloodPressureSystolic", systolic),
                ] {
                    recordHead(
                        type, Self.cuff, day, unit: "mmHg", start: at, end: at, value: .fixed(value, decimals: 0),
                        indent: "  ", &random)
                    sink.put("/>\n")
                    written.records += 1
                }
                sink.put(" </Correlation>\n")
                written.correlations += 1
                written.read["bloodPressure", default: 0] += 1
            }
            for number in 0..<Self.meals.count {
                let (at, values) = meal(day, number)
                sink.put(" <Correlation type=\"HKCorrelationTypeIdentifierFood\"")
                source(Self.food, day, &random)
                sink.put(" creationDate=\"")
                time(at + 1_300)
                sink.put("\" startDate=\"")
                time(at)
                sink.put("\" endDate=\"")
                time(at + 1_200)
                sink.put("\">\n")
                metadata("HKFoodMeal", Self.meals[number].0)
                for (index, nutrient) in Self.nutrients.enumerated() {
                    recordHead(
                        nutrient.0, Self.food, day, unit: nutrient.2, start: at, end: at + 1_200,
                        value: .fixed(values[index], decimals: 0), indent: "  ", &random)
                    sink.put(">\n")
                    metadata("HKFoodMeal", Self.meals[number].0, indent: "   ")
                    sink.put("  </Record>\n")
                    written.records += 1
                }
                sink.put(" </Correlation>\n")
                written.correlations += 1
                written.read["food", default: 0] += 1
            }
            try sink.flushIfFull()
        }
    }

    // MARK: - Workouts, summaries, the rest

    static let activities: [(StaticString, Bool)] = [
        ("HKWorkoutActivityTypeRunning", true), ("HKWorkoutActivityTypeWalking", true),
        ("HKWorkoutActivityTypeCycling", true), ("HKWorkoutActivityTypeTraditionalStrengthTraining", false),
        ("HKWorkoutActivityTypeYoga", false), ("HKWorkoutActivityTypeSwimming", false),
        ("HKWorkoutActivityTypeHiking", true), ("HKWorkoutActivityTypeHighIntensityIntervalTraining", false),
    ]

    func workouts() throws {
        for day in 0..<days where day % 7 != 6 {
            var random = random(70, day)
            let (activity, outdoor) = random.pick(Self.activities)
            let start = dayStart(day) + 17 * 3_600 + Int64(random.next() % 3_600)
            let minutes = 20 + Int(random.next() % 60)
            let end = start + Int64(minutes) * 60
            let meters = outdoor ? minutes * (120 + Int(random.next() % 150)) : 0
            let energy = minutes * (6 + Int(random.next() % 8))
            sink.put(" <Workout workoutActivityType=\"")
            sink.put(activity)
            sink.put("\" duration=\"")
            // The length less the 30 s pause.
            sink.put(fixed: minutes * 1_000 - 500, decimals: 3)
            sink.put("\" durationUnit=\"min\"")
            if outdoor {
                sink.put(" totalDistance=\"")
                sink.put(fixed: meters, decimals: 3)
                sink.put("\" totalDistanceUnit=\"km\"")
            }
            sink.put(" totalEnergyBurned=\"")
            sink.put(int: energy)
            sink.put("\" totalEnergyBurnedUnit=\"kcal\"")
            source(Self.watch, day, &random)
            sink.put(" creationDate=\"")
            time(end + 60)
            sink.put("\" startDate=\"")
            time(start)
            sink.put("\" endDate=\"")
            time(end)
            sink.put("\">\n")
            metadata("HKIndoorWorkout", outdoor ? "0" : "1")
            metadata("HKTimeZone", "Europe/London")
            metadata("HKAverageMETs", "7.6 kcal/hr·kg")
            if outdoor {
                metadata("HKWeatherTemperature", "57 degF")
                metadata("HKWeatherHumidity", "7900 %")
                metadata("HKElevationAscended", "2350 cm")
            }
            // A pause and its resume, then a segment over the whole workout.
            let pause = start + Int64(minutes) * 30
            for (kind, at, seconds) in [
                (StaticString("HKWorkoutEventTypePause"), pause, 0), ("HKWorkoutEventTypeResume", pause + 30, 0),
                ("HKWorkoutEventTypeSegment", start, minutes * 60),
            ] {
                sink.put("  <WorkoutEvent type=\"")
                sink.put(kind)
                sink.put("\" date=\"")
                time(at)
                if seconds > 0 {
                    sink.put("\" duration=\"")
                    sink.put(fixed: seconds / 6 * 1_000 + 8, decimals: 4)
                    sink.put("\" durationUnit=\"min")
                }
                sink.put("\"/>\n")
            }
            for (type, fields, unit) in [
                (StaticString("HKQuantityTypeIdentifierActiveEnergyBurned"), "sum=\"\(energy)\"", StaticString("kcal")),
                ("HKQuantityTypeIdentifierBasalEnergyBurned", "sum=\"\(minutes)\"", "kcal"),
                (
                    "HKQuantityTypeIdentifierHeartRate",
                    "average=\"\(120 + minutes % 30)\" minimum=\"88\" maximum=\"171\"", "count/min"
                ),
            ] {
                sink.put("  <WorkoutStatistics type=\"")
                sink.put(type)
                sink.put("\" startDate=\"")
                time(start)
                sink.put("\" endDate=\"")
                time(end)
                sink.put("\" ")
                sink.put(string: fields)
                sink.put(" unit=\"")
                sink.put(unit)
                sink.put("\"/>\n")
            }
            if outdoor {
                sink.put("  <WorkoutStatistics type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" startDate=\"")
                time(start)
                sink.put("\" endDate=\"")
                time(end)
                sink.put("\" sum=\"")
                sink.put(fixed: meters, decimals: 3)
                sink.put("\" unit=\"km\"/>\n")
                let (year, month, date) = Self.civil(days: (start + Int64(Self.offset(at: start))) / 86_400)
                let file = String(format: "route_%04d-%02d-%02d_%d.%02dpm.gpx", year, month, date, 5, day % 60)
                sink.put("  <WorkoutRoute")
                source(Self.watch, day, &random)
                sink.put(" creationDate=\"")
                time(end + 60)
                sink.put("\" startDate=\"")
                time(start)
                sink.put("\" endDate=\"")
                time(end)
                sink.put("\">\n")
                metadata("HKMetadataKeySyncVersion", "2", indent: "   ")
                sink.put("   <FileReference path=\"/workout-routes/")
                sink.put(string: file)
                sink.put("\"/>\n  </WorkoutRoute>\n")
                if let routeFolder {
                    let points = try route(start: start, minutes: minutes, to: routeFolder.appendingPathComponent(file))
                    written.routeFiles += 1
                    written.routeLocations += points
                }
            }
            sink.put(" </Workout>\n")
            written.workouts += 1
            written.read["workout", default: 0] += 1
            try sink.flushIfFull()
        }
    }

    /// A GPX route of a point every 10 s; how many points.
    func route(start: Int64, minutes: Int, to url: URL) throws -> Int {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
             <metadata>
              <time>2019-01-01T00:00:00Z</time>
             </metadata>
             <trk>
              <name>Route</name>
              <trkseg>

            """
        let points = minutes * 6
        for index in 0..<points {
            let (year, month, day) = Self.civil(days: (start + Int64(index) * 10) / 86_400)
            let clock = Int((start + Int64(index) * 10) % 86_400)
            text += String(
                format:
                    "   <trkpt lon=\"%.6f\" lat=\"%.6f\"><ele>%.6f</ele><time>%04d-%02d-%02dT%02d:%02d:%02dZ</time>"
                    + "<extensions><speed>%.6f</speed><course>%.6f</course><hAcc>%.6f</hAcc><vAcc>%.6f</vAcc>"
                    + "</extensions></trkpt>\n",
                -0.1 + Double(index) * 0.0001, 51.5 + Double(index) * 0.00005, 10 + Double(index % 20) * 0.1,
                year, month, day, clock / 3_600, clock / 60 % 60, clock % 60, 2.5, 90.0, 4.2, 3.1)
        }
        text += "  </trkseg>\n </trk>\n</gpx>\n"
        try Data(text.utf8).write(to: url)
        return points
    }

    func summaries() throws {
        for day in 0..<days {
            var random = random(80, day)
            let (year, month, date) = Self.civil(days: Int64(day) + AppleHealthExportGenerator.firstDay / 86_400)
            sink.put(" <ActivitySummary dateComponents=\"")
            sink.put(int: year)
            sink.put(byte: 0x2D)
            sink.put(two: month)
            sink.put(byte: 0x2D)
            sink.put(two: date)
            sink.put("\" activeEnergyBurned=\"")
            sink.put(fixed: 300_000 + Int(random.next() % 400_000), decimals: 3)
            sink.put("\" activeEnergyBurnedGoal=\"")
            sink.put(int: day < 400 ? 400 : 500)
            sink.put(
                "\" activeEnergyBurnedUnit=\"kcal\" appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"")
            sink.put(int: Int(random.next() % 90))
            sink.put("\" appleExerciseTimeGoal=\"30\" appleStandHours=\"")
            sink.put(int: 6 + Int(random.next() % 10))
            sink.put("\" appleStandHoursGoal=\"12\"/>\n")
            written.activitySummaries += 1
            for goal in ["activeEnergyBurnedGoal", "appleMoveTimeGoal", "appleExerciseTimeGoal", "appleStandHoursGoal"]
            {
                written.read[goal, default: 0] += 1
            }
            try sink.flushIfFull()
        }
    }

    /// A clinical record every 100 days and an audiogram a year: what the model does not hold.
    func clinical() throws {
        for day in stride(from: 0, to: days, by: 100) {
            sink.put(
                " <ClinicalRecord type=\"HKClinicalTypeIdentifierLabResultRecord\" identifier=\"lab-")
            sink.put(int: day)
            sink.put(
                "\" sourceName=\"St Thomas’ Hospital\" sourceURL=\"https://fhir.example.org/r4\" fhirVersion=\"4.0.1\" receivedDate=\""
            )
            time(dayStart(day) + 10 * 3_600)
            sink.put("\" resourceFilePath=\"/clinical-records/lab-")
            sink.put(int: day)
            sink.put(".json\"/>\n")
            written.clinicalRecords += 1
        }
        for day in stride(from: 0, to: days, by: 365) {
            sink.put(
                " <Audiogram type=\"HKDataTypeIdentifierAudiogram\" sourceName=\"Mimi\" sourceVersion=\"5.1\" startDate=\""
            )
            time(dayStart(day) + 11 * 3_600)
            sink.put("\" endDate=\"")
            time(dayStart(day) + 11 * 3_600 + 600)
            sink.put(
                "\">\n  <SensitivityPoint frequencyValue=\"1000\" frequencyUnit=\"Hz\" leftEarValue=\"10\" leftEarUnit=\"dBHL\" rightEarValue=\"15\" rightEarUnit=\"dBHL\"/>\n </Audiogram>\n"
            )
            written.audiograms += 1
        }
    }
}
