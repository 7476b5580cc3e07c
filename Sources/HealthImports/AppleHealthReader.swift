import Foundation
public import Health

/// The samples of an Apple Health export, read element by element as the store asks for them
/// (docs/apple-health-import.md): ``next()`` returns batches of at most ``batchSamples`` quantity and category
/// samples and heartbeat series, and about ``batchStreams`` streams (for ``HealthStoreEngine/saveAll(as:_:)``: all
/// batches in one transaction), and then ``nextObjects(limit:)`` the correlations and workouts, which are saved
/// after the samples, a few at a time; the owner's characteristics are held, and what the model cannot hold is
/// counted by element and type with its reason (``notImported``).
///
/// Correlations and workouts are recorded into a temporary file as they are met (``XMLRecording``) and read
/// from it after the samples, so that memory holds neither, whatever their number. With ``holdsObjects`` (the
/// default) ``next()`` reads them all at its end into ``correlations`` and ``workouts``, as the tests compare
/// them; the import leaves it off and asks ``nextObjects(limit:)`` for them in turn.
///
/// Every sample gets the id its natural key derives (type, source, device, start, end), so importing the export
/// again, or a newer export that holds it, names the same samples and stores nothing twice.
///
/// One thread at a time uses a reader: the caller's, or those ``readingAhead(_:)`` starts, which hand it over
/// (the compiler cannot see that through the threads).
public final class AppleHealthReader: @unchecked Sendable {
    public static let batchSamples = 10_000
    /// A batch ends too once it holds this many streams (``QuantitySeries``): records that each make a stream of
    /// their own (metadata that differs from record to record) would otherwise put 10,000 whole streams in memory
    /// at once, a few batches of them between the threads (16 MB of a 1 GB export's peak, BENCHMARKS.md,
    /// "apple-health").
    public static let batchStreams = 1_000
    /// A batch of correlations and workouts ends once their routes hold this many locations (a few MB), so that
    /// memory holds few routes whatever their length.
    public static let batchLocations = 50_000
    /// Correlations and workouts imported from one export, at most.
    public static let maximumObjects = 200_000
    static let maximumNameBytes = 256
    static let maximumMetadataKeys = 64
    static let maximumMetadataStringBytes = 4_096

    /// What was not imported, by what (`Record HKQuantityTypeIdentifierWalkingSpeed`, `ClinicalRecord`,
    /// `electrocardiograms/`): how many, why, and the line of the first.
    public struct Skipped: Hashable, Sendable {
        public var count: Int
        public var reason: String
        public var line: Int
    }

    private let export: AppleHealthExport
    /// The export's XML; after the samples, the recording of its correlations and workouts.
    private var xml: XMLPullReader
    private let defaultSource: String
    private let progress: (@Sendable (Double) -> Void)?
    private var shownPercent = -1
    private var finished = false
    private var sawRoot = false
    /// The offset of `<ExportDate>`, for activity summaries' days.
    private var exportOffset: Int32 = 0
    private var sourceCache: [String: Source] = [:]
    private var deviceCache: [String: Device?] = [:]
    private var unitCache: [String: HealthUnit] = [:]

    /// Whether ``next()`` reads every correlation and workout into ``correlations`` and ``workouts`` at its end;
    /// if not, ``nextObjects(limit:)`` hands them out.
    public var holdsObjects = true
    public private(set) var correlations: [Correlation] = []
    public private(set) var workouts: [Workout] = []
    /// The correlations and workouts met while reading the samples, and whether they are being read back.
    private var recording: XMLRecording?
    private var replaying = false
    /// Correlations and workouts read so far (of at most ``maximumObjects``).
    private var objectsRead = 0
    public private(set) var characteristics: [(type: HealthType, value: Characteristics.Value)] = []
    /// What went to the store, by type identifier (samples, heartbeat series, correlations, workouts,
    /// characteristics), as read; the store's outcomes say which were new.
    public var read: [String: Int] {
        var all = readCounts
        if lastReadCount > 0 { all[lastReadType, default: 0] += lastReadCount }
        return all
    }
    private var readCounts: [String: Int] = [:]
    /// The type read last and how many of it since it was added to ``readCounts`` (records come grouped by type,
    /// so counting them there costs a string comparison, not a hash, per record).
    private var lastReadType = ""
    private var lastReadCount = 0
    public private(set) var notImported: [String: Skipped] = [:]
    /// What of the catalog's types was not imported, by type identifier (also in ``notImported``, by element):
    /// how many, the first reason and its line.
    public private(set) var skippedByType: [String: Skipped] = [:]
    /// Records whose value was converted from the export's unit to the type's, by type identifier.
    public internal(set) var converted: [String: Int] = [:]
    /// Records, correlations and workouts whose `creationDate` was not kept (the model has none).
    public internal(set) var creationDates = 0
    /// Whether top-level records go through ``AppleHealthFastPath`` first (else every record is read by the
    /// general path, which the tests compare it with).
    public var usesFastPath = true
    /// Records the fast path took.
    public private(set) var fastRecords = 0
    private var fast = AppleHealthFastPath()
    /// The metadata of the record being read, kept from record to record.
    private var recordMetadata = MetadataBytes()
    /// Route locations kept with their workouts, and the GPX files they came from.
    public private(set) var routeLocations = 0
    public private(set) var routeFiles = 0

    /// The batch being made: its streams so far, the last one still open (``run``), as `SampleBatch(samples)`
    /// groups consecutive samples that share every field but times and value.
    private var batch = SampleBatch()
    private var run: QuantitySeries?
    /// The fast path's stream (``AppleHealthFastPath/stream``) and offset when the open stream is the fast
    /// path's: a record of the same stream is added to it as three numbers, nothing compared.
    private var runStream: (stream: Int, offset: Int32)?
    private var batchSamples = 0
    private var batchSeries: [HeartbeatSeriesSample] = []

    public init(export: AppleHealthExport, defaultSource: String, progress: (@Sendable (Double) -> Void)?)
        throws(XMLReadError)
    {
        self.export = export
        xml = try export.mainReader()
        self.defaultSource = defaultSource
        self.progress = progress
    }

    /// The next batch, or `nil` at the end of the export. Malformed XML, a limit passed or an input that fails to
    /// read throws ``XMLReadError`` (and the import stores nothing); an element the model cannot take is counted in
    /// ``notImported`` instead.
    public func next() throws(XMLReadError) -> SampleBatch? {
        while !finished, batchSamples + batchSeries.count < Self.batchSamples,
            batch.quantities.count < Self.batchStreams
        {
            guard let event = try xml.next() else {
                finished = true
                countOtherFiles()
                if holdsObjects {
                    while let objects = try nextObjects(limit: Self.maximumObjects) {
                        correlations += objects.correlations
                        workouts += objects.workouts
                    }
                }
                break
            }
            guard case .start(let name, let depth) = event else { continue }
            if depth == 0 {
                guard name == "HealthData" else {
                    throw XMLReadError(
                        line: xml.line,
                        message:
                            "the root element is <\(name.prefix(64))>, not <HealthData>: not an Apple Health export")
                }
                sawRoot = true
                continue
            }
            let line = xml.line
            if name == "Record" {
                let recordAttributes = try xml.elementAttributes()
                let children = try readRecordChildren(depth: depth)
                if usesFastPath, children.beats.isEmpty, children.problem == nil {
                    switch fast.sample(recordAttributes, recordMetadata, reader: self) {
                    case .sample(let point) where add(point):
                        count(fast.typeIdentifier)
                        fastRecords += 1
                        continue
                    case .notInCatalog(let what):
                        skip(what, "this type is not in the type catalog", line)
                        fastRecords += 1
                        continue
                    case .sample, .general:
                        break
                    }
                }
                let attributes = recordAttributes.dictionary()
                let record = record(
                    attributes, metadata: recordMetadata.pairs, beats: children.beats, problem: children.problem)
                switch record.sample {
                case .success(let sample):
                    add(sample)
                    count(sample.type.identifier)
                case .failure(let failure):
                    skip("Record \(attributes["type"]?.prefix(96) ?? "without a type")", failure.description, line)
                    if let type = attributes["type"].flatMap(AppleHealthMapping.type) {
                        skip(type: type.identifier, failure.description, line)
                    }
                }
                if let beats = record.series {
                    switch beats {
                    case .success(let one):
                        batchSeries.append(one)
                        count(HealthType.heartbeatSeries.identifier)
                    case .failure(let failure):
                        skip("HeartRateVariabilityMetadataList", failure.description, line)
                        skip(type: HealthType.heartbeatSeries.identifier, failure.description, line)
                    }
                }
                continue
            }
            if name == "Correlation" || name == "Workout" {
                // Read after the samples (nextObjects), from a recording.
                if recording == nil { recording = try XMLRecording() }
                try recording?.record(xml, startedAt: depth)
                continue
            }
            let attributes = try xml.attributes()
            switch name {
            case "Me":
                readMe(attributes, line: line)
                try xml.skip(depth: depth)
            case "ExportDate":
                if let text = attributes["value"], let (_, offset) = AppleHealthMapping.time(text) {
                    exportOffset = offset
                }
                try xml.skip(depth: depth)
            case "ActivitySummary":
                do throws(MappingError) {
                    for goal in try activityGoals(attributes) {
                        add(goal)
                        count(goal.type.identifier)
                    }
                } catch {
                    skip(name, error.description, line)
                }
                try xml.skip(depth: depth)
            case "ClinicalRecord":
                skip(name, "clinical records (FHIR) are not in the model", line)
                try xml.skip(depth: depth)
            case "Audiogram":
                skip(name, "audiograms are not in the model", line)
                try xml.skip(depth: depth)
            default:
                skip(String(name.prefix(64)), "this element is not in the model", line)
                try xml.skip(depth: depth)
            }
        }
        if let progress, export.size > 0, !replaying {
            let percent = Int(min(max(xml.bytesRead, 0) * 100 / export.size, 100))
            if percent != shownPercent {
                shownPercent = percent
                progress(Double(percent) / 100)
            }
        }
        if let run { batch.append(run) }
        batch.heartbeats = batchSeries
        defer {
            batch = SampleBatch()
            run = nil
            runStream = nil
            batchSamples = 0
            batchSeries = []
        }
        guard !batch.isEmpty else { return nil }
        return batch
    }

    /// Adds a sample to the batch: to the open stream when it belongs there, else as a new one.
    private func add(_ sample: QuantitySample) {
        batchSamples += 1
        if run?.holds(sample) == true {
            run?.append(start: sample.start.milliseconds, end: sample.end.milliseconds, value: sample.value)
            return
        }
        if let run { batch.append(run) }
        run = QuantitySeries(sample)
        runStream = nil
    }

    /// Adds the fast path's sample, as three numbers when the open stream is the fast path's same stream;
    /// `false` (nothing added) when the fast path has no whole sample for it.
    private func add(_ point: AppleHealthFastPath.Point) -> Bool {
        if let runStream, runStream.stream == fast.stream, runStream.offset == point.offset {
            batchSamples += 1
            run?.append(start: point.start, end: point.end, value: point.value)
            return true
        }
        guard let sample = fast.sample(point) else { return false }
        add(sample)
        runStream = (fast.stream, point.offset)
        return true
    }

    /// The next correlations and workouts of the export, at most `limit` of them together (fewer once their routes
    /// hold ``batchLocations`` locations), in the export's order; `nil` when there are no more. Only once ``next()``
    /// has returned `nil` (before that, `nil`). An element the model cannot take is counted in ``notImported``, as ``next()`` counts one; what throws is the temporary
    /// file failing to read back.
    public func nextObjects(limit: Int = 1_000) throws(XMLReadError)
        -> (correlations: [Correlation], workouts: [Workout])?
    {
        guard finished, let recording else { return nil }
        if !replaying {
            xml = try recording.replay()
            replaying = true
        }
        var correlations: [Correlation] = []
        var workouts: [Workout] = []
        var locations = 0
        while correlations.count + workouts.count < limit, locations < Self.batchLocations, let event = try xml.next() {
            guard case .start(let name, let depth) = event else { continue }
            let line = xml.line
            switch name {
            case "Correlation":
                if let correlation = try readCorrelation(try xml.attributes(), depth: depth, line: line) {
                    correlations.append(correlation)
                }
            case "Workout":
                if let workout = try readWorkout(try xml.attributes(), depth: depth, line: line) {
                    workouts.append(workout)
                    locations += workout.routeLocationCount
                }
            default:
                try xml.skip(depth: depth)
            }
        }
        guard !correlations.isEmpty || !workouts.isEmpty else { return nil }
        return (correlations, workouts)
    }

    /// ``nextObjects(limit:)`` on a thread of its own (it reads a temporary file, and the GPX files of routes).
    public func readObjects(limit: Int = 1_000) async throws(XMLReadError)
        -> (correlations: [Correlation], workouts: [Workout])?
    {
        let read = await OwnThread.run("wearhouse.objects") {
            Result { () throws(XMLReadError) in try self.nextObjects(limit: limit) }
        }
        return try read.get()
    }

    /// Reads the samples with the export's XML parsed on a thread of its own, ahead of the reader, and the reader
    /// (``next()``) on another, while `consume` takes the batches through its `next` (which waits for each; `nil`
    /// at the end, or the reader's error): a store's ``HealthStoreEngine/saveAll(as:_:)`` saves one batch while
    /// the next is read. Between the threads at most a few pieces of XML and one batch wait, so memory does not
    /// grow. Returns what `consume` returns, once the threads have ended; when `consume` throws, they stop.
    public func readingAhead<Result: Sendable>(
        _ consume: (_ next: @escaping @Sendable () throws -> SampleBatch?) async throws -> Result
    ) async throws -> Result {
        let parser = xml.readAhead(pieces: 16)
        let batches = HandOver<SampleBatch>(capacity: 1)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            if let parser {
                group.addTask { await OwnThread.run("wearhouse.xml") { parser.run() } }
            }
            group.addTask {
                await OwnThread.run("wearhouse.reader") {
                    do {
                        while let batch = try self.next() {
                            guard batches.put(batch) else { break }
                        }
                        batches.finish()
                    } catch {
                        batches.finish(throwing: error)
                    }
                    parser?.stop()
                }
            }
            defer {
                batches.stop()
                parser?.stop()
            }
            let result = try await consume { try batches.take() }
            try await group.waitForAll()
            return result
        }
    }

    /// Counts one more of `type` read.
    private func count(_ type: String) {
        if type == lastReadType {
            lastReadCount += 1
            return
        }
        if lastReadCount > 0 { readCounts[lastReadType, default: 0] += lastReadCount }
        lastReadType = type
        lastReadCount = 1
    }

    /// Counts a record, correlation, workout or heartbeat series of the catalog's `type` not imported, under its
    /// type (``skippedByType``); the first reason and line are kept.
    private func skip(type: String, _ reason: String, _ line: Int) {
        if skippedByType[type] == nil {
            skippedByType[type] = Skipped(count: 1, reason: reason, line: line)
        } else {
            skippedByType[type]?.count += 1
        }
    }

    private func skip(_ what: String, _ reason: String, _ line: Int, count: Int = 1) {
        if notImported[what] == nil {
            notImported[what] = Skipped(count: count, reason: reason, line: line)
        } else {
            notImported[what]?.count += count
        }
    }

    private func countOtherFiles() {
        for (folder, count) in export.otherFiles() {
            let reason =
                switch folder {
                case "electrocardiograms/": "ECG voltage files are not in the model"
                case "clinical-records/": "clinical records (FHIR JSON) are not in the model"
                case "export_cda.xml": "the same data as export.xml in HL7 CDA form; export.xml is what is read"
                default: "files the model does not read"
                }
            skip(folder + (folder.hasSuffix("/") ? " files" : ""), reason, 0, count: count)
        }
    }

    // MARK: - Elements

    /// A `<Record>`'s sample and, when it has `<HeartRateVariabilityMetadataList>`, its heartbeat series.
    struct RecordResult {
        var sample: Result<QuantitySample, MappingError>
        var series: Result<HeartbeatSeriesSample, MappingError>?
    }

    /// What a `<Record>` holds besides its metadata entries (which go to ``recordMetadata``): its beats, and the
    /// first thing in it a record does not hold.
    struct RecordChildren {
        var beats: [(bpm: String, time: String)] = []
        var problem: String?
    }

    /// Reads the children of the `<Record>` ``XMLPullReader/next()`` just started at `depth`, up to its end; its
    /// metadata entries into ``recordMetadata``.
    private func readRecordChildren(depth: Int) throws(XMLReadError) -> RecordChildren {
        recordMetadata.removeAll()
        var children = RecordChildren()
        while let event = try xml.next() {
            switch event {
            case .end(_, let end) where end == depth:
                return children
            case .start("MetadataEntry", let at) where at == depth + 1:
                recordMetadata.append(try xml.elementAttributes())
            case .start("HeartRateVariabilityMetadataList", let at) where at == depth + 1:
                continue
            case .start("InstantaneousBeatsPerMinute", let at) where at == depth + 2:
                let beat = try xml.attributes()
                guard children.beats.count < 100_000 else {
                    children.problem = "more than 100000 beats"
                    continue
                }
                children.beats.append((beat["bpm"] ?? "", beat["time"] ?? ""))
            case .start(let name, let at):
                children.problem = children.problem ?? "it holds <\(name.prefix(64))>, which a record does not"
                try xml.skip(depth: at)
            case .end:
                continue
            }
        }
        throw XMLReadError(line: xml.line, message: "the document ends inside a <Record>")
    }

    private func readRecord(_ attributes: [String: String], depth: Int) throws(XMLReadError) -> RecordResult {
        let children = try readRecordChildren(depth: depth)
        return record(attributes, metadata: recordMetadata.pairs, beats: children.beats, problem: children.problem)
    }

    private func record(
        _ attributes: [String: String], metadata entries: [(String, String)], beats: [(bpm: String, time: String)],
        problem: String?
    ) -> RecordResult {
        let sample = Result { () throws(MappingError) -> QuantitySample in
            if let problem { throw MappingError(problem) }
            return try quantitySample(attributes, metadata: entries)
        }
        guard !beats.isEmpty else { return RecordResult(sample: sample, series: nil) }
        let series = Result { () throws(MappingError) -> HeartbeatSeriesSample in
            try heartbeatSeries(attributes, beats: beats)
        }
        return RecordResult(sample: sample, series: series)
    }

    /// The quantity or category sample of a record's attributes and metadata entries.
    private func quantitySample(_ attributes: [String: String], metadata entries: [(String, String)])
        throws(MappingError) -> QuantitySample
    {
        guard let typeName = attributes["type"] else { throw MappingError("the record has no type") }
        guard let type = AppleHealthMapping.type(typeName), type.isSampleType else {
            throw MappingError("this type is not in the type catalog")
        }
        let (start, offset, end) = try interval(attributes)
        guard let valueText = attributes["value"] else { throw MappingError("the record has no value") }
        let value: Double
        if type.kind == .category {
            guard let found = AppleHealthMapping.categoryValue(valueText, of: type) else {
                throw MappingError("\(type.identifier) has no value \(valueText.prefix(64))")
            }
            value = Double(found)
        } else {
            guard let number = Double(valueText), number.isFinite else {
                throw MappingError("value \(valueText.prefix(64)) is not a number")
            }
            value = try convert(number, from: attributes["unit"] ?? type.canonicalUnit, to: type)
        }
        let span = end.milliseconds - start.milliseconds
        let limit: Int64 = type.aggregation == .cumulative ? 7 * 86_400_000 : 86_400_000
        guard span <= limit else {
            throw MappingError("it spans \(span / 1_000) s, more than \(limit / 3_600_000) hours")
        }
        if attributes["creationDate"] != nil { creationDates += 1 }
        let sample = QuantitySample(
            type: type, start: start, end: end, startOffsetSeconds: offset, value: value,
            source: try source(attributes), device: try device(attributes), metadata: try metadata(entries))
        if let reason = sample.invalidityReason(as: type) { throw MappingError(reason) }
        if type.kind != .category, let unit = attributes["unit"], unit != type.canonicalUnit {
            converted[type.identifier, default: 0] += 1
        }
        return sample
    }

    /// A heart rate variability record's beats (`bpm` at a time of day) as a heartbeat series of its source and
    /// device: each beat's RR interval is 60,000 / bpm ms (to the microsecond), its offset the time since the
    /// series start, which is the record's start or the first beat if that is earlier (the record's times are
    /// whole seconds, the beats' hundredths); the series ends at the record's end or the last beat.
    private func heartbeatSeries(_ attributes: [String: String], beats raw: [(bpm: String, time: String)])
        throws(MappingError) -> HeartbeatSeriesSample
    {
        let (start, offset, end) = try interval(attributes)
        let localStart = start.milliseconds + Int64(offset) * 1_000
        let startOfDay = localStart - ((localStart % 86_400_000) + 86_400_000) % 86_400_000
        var times: [Int64] = []
        var rates: [Double] = []
        var previous = Int64.min
        for (index, beat) in raw.enumerated() {
            guard let bpm = Double(beat.bpm), bpm >= 1, bpm <= 300 else {
                throw MappingError("beat \(index + 1): bpm \(beat.bpm.prefix(32)) is not from 1 to 300")
            }
            guard let clock = AppleHealthMapping.timeOfDay(beat.time) else {
                throw MappingError("beat \(index + 1): time \(beat.time.prefix(32)) is not h:mm:ss.SS [AM|PM]")
            }
            // The beat's instant on the record's local day, or the next day when the series crosses midnight.
            var local = startOfDay + clock
            while local < localStart - 43_200_000 { local += 86_400_000 }
            let instant = local - Int64(offset) * 1_000
            guard instant > previous else { throw MappingError("beat \(index + 1): times must increase") }
            previous = instant
            times.append(instant)
            rates.append(bpm)
        }
        let first = min(start.milliseconds, times[0])
        let last = max(end.milliseconds, times[times.count - 1])
        guard last - first <= 86_400_000 else { throw MappingError("the beats span more than a day") }
        let beats = zip(times, rates).map { time, bpm in
            Beat(offsetMilliseconds: Double(time - first), rrMilliseconds: (60_000_000 / bpm).rounded() / 1_000)
        }
        let series = HeartbeatSeriesSample(
            start: Instant(milliseconds: first), end: Instant(milliseconds: last), startOffsetSeconds: offset,
            beats: beats, source: try source(attributes), device: try device(attributes))
        if let reason = series.invalidityReason { throw MappingError(reason) }
        return series
    }

    /// The correlation `<Correlation>` starts with `attributes` at `depth`, read up to its end; `nil` (counted in
    /// ``notImported``) when it cannot be imported.
    private func readCorrelation(_ attributes: [String: String], depth: Int, line: Int) throws(XMLReadError)
        -> Correlation?
    {
        var metadata: [(String, String)] = []
        var members: [Result<QuantitySample, MappingError>] = []
        var problem: String?
        while let event = try xml.next() {
            switch event {
            case .end(_, let end) where end == depth:
                let what = "Correlation \(attributes["type"]?.prefix(96) ?? "without a type")"
                do throws(MappingError) {
                    if let problem { throw MappingError(problem) }
                    let correlation = try correlation(attributes, metadata: metadata, members: members)
                    guard objectsRead < Self.maximumObjects else {
                        throw MappingError("more than \(Self.maximumObjects) correlations and workouts in one export")
                    }
                    objectsRead += 1
                    count(correlation.type.identifier)
                    return correlation
                } catch {
                    skip(what, error.description, line)
                    if let type = attributes["type"].flatMap(AppleHealthMapping.type), type.kind == .correlation {
                        skip(type: type.identifier, error.description, line)
                    }
                }
                return nil
            case .start("MetadataEntry", let at) where at == depth + 1:
                let entry = try xml.attributes()
                metadata.append((entry["key"] ?? "", entry["value"] ?? ""))
            case .start("Record", let at) where at == depth + 1:
                let record = try readRecord(try xml.attributes(), depth: at)
                members.append(record.sample)
            case .start(let name, let at):
                problem = problem ?? "it holds <\(name.prefix(64))>, which a correlation does not"
                try xml.skip(depth: at)
            case .end:
                continue
            }
        }
        throw XMLReadError(line: xml.line, message: "the document ends inside a <Correlation>")
    }

    private func correlation(
        _ attributes: [String: String], metadata entries: [(String, String)],
        members: [Result<QuantitySample, MappingError>]
    ) throws(MappingError) -> Correlation {
        guard let typeName = attributes["type"], let type = AppleHealthMapping.type(typeName),
            type.kind == .correlation
        else { throw MappingError("this correlation type is not in the type catalog") }
        guard members.count <= Correlation.maximumObjects else {
            throw MappingError("more than \(Correlation.maximumObjects) records")
        }
        var objects: [QuantitySample] = []
        for (index, member) in members.enumerated() {
            switch member {
            case .success(let sample): objects.append(sample)
            case .failure(let failure): throw MappingError("record \(index + 1): \(failure.description)")
            }
        }
        let (start, offset, end) = try interval(attributes)
        if attributes["creationDate"] != nil { creationDates += 1 }
        let correlation = Correlation(
            type: type, start: start, end: end, startOffsetSeconds: offset, objects: objects,
            source: try source(attributes), device: try device(attributes), metadata: try metadata(entries))
        if let reason = correlation.invalidityReason { throw MappingError(reason) }
        return correlation
    }

    /// The workout `<Workout>` starts with `attributes` at `depth`, read up to its end; `nil` (counted in
    /// ``notImported``) when it cannot be imported.
    private func readWorkout(_ attributes: [String: String], depth: Int, line: Int) throws(XMLReadError) -> Workout? {
        var metadata: [(String, String)] = []
        var events: [[String: String]] = []
        var statistics: [[String: String]] = []
        var routes: [(file: String?, metadata: [(String, String)])] = []
        var problem: String?
        while let event = try xml.next() {
            switch event {
            case .end(_, let end) where end == depth:
                let what = "Workout \(attributes["workoutActivityType"]?.prefix(96) ?? "without a type")"
                do throws(MappingError) {
                    if let problem { throw MappingError(problem) }
                    let workout = try workout(
                        attributes, metadata: metadata, events: events, statistics: statistics, routes: routes,
                        line: line)
                    guard objectsRead < Self.maximumObjects else {
                        throw MappingError("more than \(Self.maximumObjects) correlations and workouts in one export")
                    }
                    objectsRead += 1
                    count(HealthType.workout.identifier)
                    return workout
                } catch {
                    skip(what, error.description, line)
                    skip(type: HealthType.workout.identifier, error.description, line)
                }
                return nil
            case .start("MetadataEntry", let at) where at == depth + 1:
                let entry = try xml.attributes()
                metadata.append((entry["key"] ?? "", entry["value"] ?? ""))
            case .start("WorkoutEvent", let at) where at == depth + 1:
                guard events.count < Workout.maximumEvents else {
                    problem = "more than \(Workout.maximumEvents) events"
                    try xml.skip(depth: at)
                    continue
                }
                events.append(try xml.attributes())
                try xml.skip(depth: at)
            case .start("WorkoutStatistics", let at) where at == depth + 1:
                if statistics.count < 16 { statistics.append(try xml.attributes()) }
                try xml.skip(depth: at)
            case .start("WorkoutRoute", let at) where at == depth + 1:
                var file: String?
                var routeMetadata: [(String, String)] = []
                while let inner = try xml.next() {
                    if case .end(_, let end) = inner, end == at { break }
                    if case .start("FileReference", let fileDepth) = inner, fileDepth == at + 1 {
                        file = try xml.attributes()["path"]
                    }
                    if case .start("MetadataEntry", let entryDepth) = inner, entryDepth == at + 1,
                        routeMetadata.count < Self.maximumMetadataKeys
                    {
                        let entry = try xml.attributes()
                        routeMetadata.append((entry["key"] ?? "", entry["value"] ?? ""))
                    }
                }
                guard routes.count < Workout.maximumRoutes else {
                    skip("WorkoutRoute", "a workout holds at most \(Workout.maximumRoutes) routes", xml.line)
                    continue
                }
                routes.append((file, routeMetadata))
            case .start(let name, let at):
                skip("Workout/\(name.prefix(64))", "this part of a workout is not in the model", xml.line)
                try xml.skip(depth: at)
            case .end:
                continue
            }
        }
        throw XMLReadError(line: xml.line, message: "the document ends inside a <Workout>")
    }

    /// A workout: its activity type, interval, duration and totals (converted to s, kcal, m and counts), events
    /// (an end past the workout's by less than a second, which whole-second times make, is the workout's end),
    /// statistics (as `<type>.sum`, `.average`, `.minimum`, `.maximum` quantities in its metadata, and a total the
    /// workout lacks from the sums of energy, distance, strokes and flights), and the locations of each route's GPX
    /// file (a route that cannot be read or kept is named in ``notImported``, and the workout kept without it).
    private func workout(
        _ attributes: [String: String], metadata entries: [(String, String)], events: [[String: String]],
        statistics: [[String: String]], routes: [(file: String?, metadata: [(String, String)])], line: Int
    ) throws(MappingError) -> Workout {
        guard let activityText = attributes["workoutActivityType"],
            let activity = AppleHealthMapping.activityType(activityText)
        else { throw MappingError("this activity type is not HealthKit's") }
        let (start, offset, end) = try interval(attributes)
        let length = Double(end.milliseconds - start.milliseconds) / 1_000
        func amount(_ key: String, _ unit: String) throws(MappingError) -> Double? {
            guard let text = attributes[key] else { return nil }
            guard let number = Double(text), number.isFinite else {
                throw MappingError("\(key) \(text.prefix(32)) is not a number")
            }
            return try convert(number, from: attributes[key + "Unit"] ?? unit, toUnit: unit)
        }
        var duration = try amount("duration", "s") ?? length
        // The export's times are whole seconds, its durations not: a duration up to a second longer is the length.
        if duration > length, duration < length + 1 { duration = length }
        if attributes["creationDate"] != nil { creationDates += 1 }
        var metadata = try metadata(entries)
        var workout = Workout(
            activityType: activity, start: start, end: end, startOffsetSeconds: offset, duration: duration,
            totalEnergyBurned: try amount("totalEnergyBurned", "kcal"),
            totalDistance: try amount("totalDistance", "m"),
            totalSwimmingStrokeCount: try amount("totalSwimmingStrokeCount", "count"),
            totalFlightsClimbed: try amount("totalFlightsClimbed", "count"), source: try source(attributes),
            device: try device(attributes))
        for (index, event) in events.enumerated() {
            guard let kind = event["type"].flatMap(AppleHealthMapping.eventKind) else {
                throw MappingError("event \(index + 1): type \(event["type"]?.prefix(64) ?? "") is not HealthKit's")
            }
            guard let date = event["date"].flatMap(AppleHealthMapping.time)?.instant else {
                throw MappingError("event \(index + 1): date is not yyyy-MM-dd HH:mm:ss ±hhmm")
            }
            var eventEnd = date
            if let text = event["duration"] {
                guard let number = Double(text), number.isFinite, number >= 0 else {
                    throw MappingError("event \(index + 1): duration \(text.prefix(32)) is not a number")
                }
                let seconds = try convert(number, from: event["durationUnit"] ?? "s", toUnit: "s")
                eventEnd = date.adding(milliseconds: Int64((seconds * 1_000).rounded()))
            }
            if eventEnd > end, eventEnd.milliseconds - end.milliseconds < 1_000 { eventEnd = end }
            workout.events.append(WorkoutEvent(kind, start: date, end: eventEnd))
        }
        for statistic in statistics {
            guard let typeName = statistic["type"] else { continue }
            let type = AppleHealthMapping.type(typeName)
            let name = type?.identifier ?? AppleHealthMapping.shortName(typeName)
            let unit = statistic["unit"] ?? type?.canonicalUnit ?? ""
            for field in ["sum", "average", "minimum", "maximum"] {
                guard let text = statistic[field], let number = Double(text), number.isFinite else { continue }
                guard metadata.count < Self.maximumMetadataKeys else { break }
                metadata["\(name).\(field)"] = .quantity(number, unit: unit)
            }
            guard let sumText = statistic["sum"], let sum = Double(sumText), let type else { continue }
            switch type.identifier {
            case "activeEnergyBurned" where workout.totalEnergyBurned == nil:
                workout.totalEnergyBurned = try convert(sum, from: unit, toUnit: "kcal")
            case "distanceWalkingRunning", "distanceCycling", "distanceSwimming", "distanceWheelchair",
                "distanceDownhillSnowSports":
                if workout.totalDistance == nil { workout.totalDistance = try convert(sum, from: unit, toUnit: "m") }
            case "swimmingStrokeCount" where workout.totalSwimmingStrokeCount == nil:
                workout.totalSwimmingStrokeCount = sum
            case "flightsClimbed" where workout.totalFlightsClimbed == nil:
                workout.totalFlightsClimbed = sum
            default:
                break
            }
        }
        workout.metadata = metadata
        if let reason = workout.invalidityReason { throw MappingError(reason) }
        for route in routes {
            guard let file = route.file else {
                skip("WorkoutRoute without a FileReference", "the route names no GPX file", line)
                continue
            }
            let what = "WorkoutRoute \(file.prefix(96))"
            do throws(MappingError) {
                var candidate = workout
                candidate.routes.append(
                    try self.route(inFile: file, metadata: try self.metadata(route.metadata)))
                if let reason = candidate.routesInvalidityReason { throw MappingError(reason) }
                workout = candidate
                routeLocations += workout.routes.last?.locations.count ?? 0
                routeFiles += 1
            } catch {
                skip(what, error.description, line)
            }
        }
        return workout
    }

    /// The route in the GPX file `path` of the export: each `<trkpt>`'s `lat` and `lon`, its `<ele>` and `<time>`,
    /// and the `<speed>`, `<course>`, `<hAcc>` and `<vAcc>` of its `<extensions>` (as Apple's export writes them;
    /// a negative one is Core Location's "unknown", so no value). A location without a time, or a number that does
    /// not read, refuses the route, naming the location.
    private func route(inFile path: String, metadata: [String: MetadataValue]) throws(MappingError) -> WorkoutRoute {
        var locations: [RouteLocation] = []
        do {
            guard let gpx = try export.reader(ofExportFile: path) else {
                throw MappingError("the export does not hold this GPX file")
            }
            var point: RouteLocation?
            var timed = false
            func number(_ name: String, _ text: String) throws(MappingError) -> Double {
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard let value = Double(trimmed), value.isFinite else {
                    throw MappingError(
                        "location \(locations.count + 1) (line \(gpx.line)): \(name) \(trimmed.prefix(32)) is not a number"
                    )
                }
                return value
            }
            while let event = try gpx.next() {
                switch event {
                case .start("trkpt", _):
                    let attributes = try gpx.attributes()
                    let latitude = try number("lat", attributes["lat"] ?? "")
                    let longitude = try number("lon", attributes["lon"] ?? "")
                    point = RouteLocation(time: Instant(milliseconds: 0), latitude: latitude, longitude: longitude)
                    timed = false
                case .end("trkpt", _):
                    guard let done = point else { continue }
                    guard timed else {
                        throw MappingError("location \(locations.count + 1) (line \(gpx.line)) has no <time>")
                    }
                    guard locations.count < Workout.maximumRouteLocations else {
                        throw MappingError("more than \(Workout.maximumRouteLocations) locations")
                    }
                    locations.append(done)
                    point = nil
                case .end(let name, _) where point != nil:
                    let text = try gpx.text()
                    switch name {
                    case "ele": point?.altitude = try number(name, text)
                    case "time":
                        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                        guard case .success(let instant, _) = RFC3339Time.parse(trimmed) else {
                            throw MappingError(
                                "location \(locations.count + 1) (line \(gpx.line)): time \(trimmed.prefix(40)) is not an RFC 3339 time"
                            )
                        }
                        point?.time = instant
                        timed = true
                    case "speed": point?.speed = Self.known(try number(name, text))
                    case "course":
                        point?.course = Self.known(try number(name, text)).map {
                            $0.truncatingRemainder(dividingBy: 360)
                        }
                    case "hAcc": point?.horizontalAccuracy = Self.known(try number(name, text))
                    case "vAcc": point?.verticalAccuracy = Self.known(try number(name, text))
                    default: break
                    }
                default:
                    break
                }
            }
        } catch let error as MappingError {
            throw error
        } catch {
            throw MappingError("the GPX file cannot be read: \(error)")
        }
        guard !locations.isEmpty else { throw MappingError("the GPX file holds no location (<trkpt>)") }
        return WorkoutRoute(locations: locations, metadata: metadata)
    }

    /// A GPX extension's number, `nil` when negative (Core Location's "unknown").
    private static func known(_ value: Double) -> Double? { value < 0 ? nil : value }

    /// The source of the activity rings' goals (the Health app's, whose rings they are).
    static let activitySource = Source(identifier: "com.apple.Health")

    /// An `<ActivitySummary>`'s goals as samples of `activeEnergyBurnedGoal`, `appleExerciseTimeGoal`,
    /// `appleStandHoursGoal` and `appleMoveTimeGoal` over its day (`dateComponents`, midnight to midnight at the
    /// export's offset), each with the day's achieved value as metadata `achieved`.
    private func activityGoals(_ attributes: [String: String]) throws(MappingError) -> [QuantitySample] {
        guard let dayText = attributes["dateComponents"], dayText.count == 10,
            let day = try? LocalDateTime(parsing: dayText), day.isMidnight
        else {
            throw MappingError(
                "dateComponents \(attributes["dateComponents"]?.prefix(32) ?? "(none)") is not YYYY-MM-DD")
        }
        let start = Instant(milliseconds: day.naiveMilliseconds - Int64(exportOffset) * 1_000)
        let end = start.adding(milliseconds: 86_400_000)
        var goals: [QuantitySample] = []
        let rings: [(String, String, String)] = [
            ("activeEnergyBurned", "activeEnergyBurnedGoal", attributes["activeEnergyBurnedUnit"] ?? "kcal"),
            ("appleExerciseTime", "appleExerciseTimeGoal", "min"), ("appleStandHours", "appleStandHoursGoal", "count"),
            ("appleMoveTime", "appleMoveTimeGoal", "min"),
        ]
        for (achievedKey, goalKey, unit) in rings {
            guard let goalText = attributes[goalKey], let type = HealthTypeCatalog.type(goalKey) else { continue }
            guard let goal = Double(goalText), goal.isFinite else {
                throw MappingError("\(goalKey) \(goalText.prefix(32)) is not a number")
            }
            var metadata: [String: MetadataValue] = [:]
            if let text = attributes[achievedKey] {
                guard let achieved = Double(text), achieved.isFinite else {
                    throw MappingError("\(achievedKey) \(text.prefix(32)) is not a number")
                }
                metadata["achieved"] = .quantity(achieved, unit: unit)
            }
            let sample = QuantitySample(
                type: type, start: start, end: end, startOffsetSeconds: exportOffset,
                value: try convert(goal, from: unit, to: type), source: Self.activitySource, metadata: metadata)
            if let reason = sample.invalidityReason(as: type) { throw MappingError(reason) }
            goals.append(sample)
        }
        return goals
    }

    /// `<Me>`'s characteristics (`HKCharacteristicTypeIdentifierDateOfBirth`, ...), for the store's owner; those
    /// the model has not (`...CardioFitnessMedicationsUse`) are counted.
    private func readMe(_ attributes: [String: String], line: Int) {
        for (key, text) in attributes.sorted(by: { $0.key < $1.key }) {
            guard let type = AppleHealthMapping.type(key), type.kind == .characteristic else {
                if !text.isEmpty, !text.hasSuffix("NotSet"), text != "None" {
                    skip("Me \(key.prefix(96))", "this characteristic is not in the model", line)
                }
                continue
            }
            do throws(MappingError) {
                guard let value = try AppleHealthMapping.characteristic(text, of: type) else { continue }
                characteristics.append((type, value))
                count(type.identifier)
            } catch {
                skip("Me \(key.prefix(96))", error.description, line)
            }
        }
    }

    // MARK: - Fields

    /// `startDate`, `endDate` (the start when absent): the instants and the start's offset.
    private func interval(_ attributes: [String: String]) throws(MappingError) -> (Instant, Int32, Instant) {
        guard let startText = attributes["startDate"], let (start, offset) = AppleHealthMapping.time(startText)
        else {
            throw MappingError(
                "startDate \(attributes["startDate"]?.prefix(40) ?? "(none)") is not yyyy-MM-dd HH:mm:ss ±hhmm")
        }
        var end = start
        if let endText = attributes["endDate"] {
            guard let parsed = AppleHealthMapping.time(endText) else {
                throw MappingError("endDate \(endText.prefix(40)) is not yyyy-MM-dd HH:mm:ss ±hhmm")
            }
            end = parsed.instant
        }
        guard end >= start else { throw MappingError("endDate is before startDate") }
        return (start, offset, end)
    }

    private func source(_ attributes: [String: String]) throws(MappingError) -> Source {
        try source(name: attributes["sourceName"], version: attributes["sourceVersion"])
    }

    /// The source of a `sourceName` and `sourceVersion` (the default source without a name).
    func source(name: String?, version: String?) throws(MappingError) -> Source {
        let name = name ?? defaultSource
        let key = name + "\u{0}" + (version ?? "\u{1}")
        if let known = sourceCache[key] { return known }
        guard name.utf8.count <= Self.maximumNameBytes, (version?.utf8.count ?? 0) <= Self.maximumNameBytes else {
            throw MappingError("sourceName or sourceVersion is longer than \(Self.maximumNameBytes) bytes")
        }
        let source = Source(identifier: name.isEmpty ? defaultSource : name, version: version)
        if sourceCache.count < 10_000 { sourceCache[key] = source }
        return source
    }

    private func device(_ attributes: [String: String]) throws(MappingError) -> Device? {
        guard let text = attributes["device"] else { return nil }
        return try device(text: text)
    }

    /// The device of a `device` text (``AppleHealthMapping/device(_:)``), its fields checked against the limit.
    func device(text: String) throws(MappingError) -> Device? {
        // Keyed by what the device depends on: the text after the object address, which changes from record to
        // record (so that one device is one value, its strings shared, and the cache stays small).
        var key = text
        if text.hasPrefix("<<HKDevice:"), let close = text.firstIndex(of: ">") {
            key = "\u{0}" + text[text.index(after: close)...]
        }
        if let known = deviceCache[key] { return known }
        let device = AppleHealthMapping.device(text)
        if let device {
            let fields = [
                device.name, device.manufacturer, device.model, device.hardwareVersion, device.softwareVersion,
                device.firmwareVersion, device.localIdentifier,
            ]
            guard fields.allSatisfy({ ($0?.utf8.count ?? 0) <= Self.maximumNameBytes }) else {
                throw MappingError("a device field is longer than \(Self.maximumNameBytes) bytes")
            }
        }
        if deviceCache.count < 10_000 { deviceCache[key] = device }
        return device
    }

    /// Metadata entries as the model's (``AppleHealthMapping/metadataKey(_:)``, ``metadataValue(_:key:)``).
    func metadata(_ entries: [(String, String)]) throws(MappingError) -> [String: MetadataValue] {
        guard entries.count <= Self.maximumMetadataKeys else {
            throw MappingError("more than \(Self.maximumMetadataKeys) metadata entries")
        }
        var metadata: [String: MetadataValue] = [:]
        for (rawKey, text) in entries {
            let key = AppleHealthMapping.metadataKey(rawKey)
            guard !key.isEmpty, key.utf8.count <= Self.maximumNameBytes else {
                throw MappingError("a metadata key is empty or longer than \(Self.maximumNameBytes) bytes")
            }
            guard text.utf8.count <= Self.maximumMetadataStringBytes else {
                throw MappingError("metadata \(key.prefix(64)) is longer than \(Self.maximumMetadataStringBytes) bytes")
            }
            metadata[key] = AppleHealthMapping.metadataValue(text, key: key)
        }
        return metadata
    }

    func unit(_ text: String) throws(MappingError) -> HealthUnit {
        if let known = unitCache[text] { return known }
        guard text.utf8.count <= Self.maximumNameBytes else { throw MappingError("the unit is too long") }
        do {
            let unit = try HealthUnit(text)
            if unitCache.count < 1_000 { unitCache[text] = unit }
            return unit
        } catch {
            throw MappingError("unit \(text.prefix(64)): \(error)")
        }
    }

    private func convert(_ value: Double, from unitText: String, to type: HealthType) throws(MappingError) -> Double {
        try convert(value, from: unitText, toUnit: type.canonicalUnit)
    }

    private func convert(_ value: Double, from unitText: String, toUnit target: String) throws(MappingError) -> Double {
        if unitText == target { return value }
        do {
            return try unit(unitText).convert(value, to: unit(target))
        } catch let failure as MappingError {
            throw failure
        } catch {
            throw MappingError("unit \(unitText.prefix(64)) does not convert to \(target): \(error)")
        }
    }
}
