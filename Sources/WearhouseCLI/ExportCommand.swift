import Foundation
import GATT
internal import Glibc
import Health
import HealthImports
import SQLiteStore
import StoreEngine

/// `wearhouse export`: samples as CSV, Open mHealth NDJSON or FHIR R4 Observations (NDJSON), each carrying
/// its id, so re-importing an export is idempotent.
struct ExportCommand: Command {
    let name = "export"
    let abstract = "Export samples as CSV, Open mHealth NDJSON or FHIR R4 NDJSON."
    var discussion: String {
        """
        Every type is exported by default, heartbeat series included. ndjson: one Open mHealth data point a line
        (heart-rate 2.0, step-count 3.0, and a wearhouse schema for the other types; a heartbeat series lists its
        beats), with the sample's source, device, subject and metadata under header.wearhouse;
        'wearhouse import-samples' reads it back into the same samples. Correlations and workouts are one line
        each: blood pressure as omh blood-pressure 3.0 (fhir: one Observation, LOINC 85354-9, components 8480-6
        and 8462-4 in mm[Hg]), food with its members, a workout as omh physical-activity 1.2 with its whole record,
        routes included (fhir: an Observation with the activity type, duration, totals and events, and each route
        as a GeoJSON attachment); a correlation's members are written with it, not again on their own, and a
        workout carries the ids of its samples. fhir: one R4 Observation a line,
        the type's LOINC code and UCUM units, the sample id as identifier urn:uuid:<id>; body weight, height (cm),
        body temperature (Cel), oxygen saturation (%), heart rate and respiratory rate (/min) follow the
        vital-signs profiles; a category sample's value is a code (valueCodeableConcept, the value's name), a
        heartbeat series' beats are components. csv: the columns of 'samples --format csv' plus the metadata as
        JSON; a heartbeat series gives one row per beat (its RR interval in ms at the beat's instant). sqlite: a
        database of one row per sample (tables types, samples and heartbeats; times as ISO text and epoch
        milliseconds, metadata as JSON text) that sqlite3, Datasette or pandas read as it is
        (docs/sqlite-export.md); it holds samples and series only (correlations' members among them), not
        correlations or workouts as such; needs --out. gpx: the workouts' routes as one GPX 1.1 document, a track a route
        named by its workout's activity and start, each location with its altitude, time and, as Apple's export
        writes them, speed, course and accuracies under <extensions> (only workouts: --type workout or none).
        Samples are written as they are read (\(ExportCommand.columnsPageSize)
        samples, or \(ExportCommand.pageSize) series, correlations or workouts, at a time), so memory stays flat
        whatever the export's size; --out is written beside the file and renamed over
        it once complete. A running count shows on stderr when it is a terminal (and the data does not go there).
        """
    }

    /// What `--format` names.
    enum Format: String, CaseIterable, Sendable {
        case csv, ndjson, fhir, sqlite, gpx
    }

    struct Options: CommandOptions {
        var format = Format.csv
        var types: [HealthType]?
        var from: StatisticsTime?
        var to: StatisticsTime?
        var timeZone = StoreOptions.utc
        var subjects: [String]?
        var out: String?
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .choice(
            "format", \.format, required: true,
            help: "What to write: CSV, Open mHealth NDJSON, FHIR R4 NDJSON or a SQLite database (needs --out)."),
        StoreOptions.types("type", \.types, help: "Comma-separated types (default: all)."),
        StoreOptions.time("from", \.from, help: "Range start."),
        StoreOptions.time("to", \.to, help: "Range end (exclusive)."), StoreOptions.timeZone(\.timeZone),
        .list("subject", value: "names", \.subjects, help: "Only these subjects."),
        .text("out", value: "file", \.out, kind: .path, help: "Write here instead of standard output."),
        StoreOptions.store(\.store),
    ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        await runStoreCommand(console) {
            let format = options.format
            let chosen = options.types ?? Self.exportedTypes
            let types =
                format == .sqlite ? chosen.filter { $0.isSampleType || $0.kind == .series } : Self.inExportOrder(chosen)
            if format == .gpx, let chosen = options.types, chosen != [.workout] {
                console.error("--format gpx writes workouts' routes: --type workout, or no --type")
                return .usage
            }
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            if format == .sqlite {
                guard let path = options.out else {
                    console.error("--format sqlite needs --out <file>")
                    return .usage
                }
                let query = SampleQuery(
                    type: .heartRate, from: StoreOptions.instant(options.from, in: options.timeZone),
                    to: StoreOptions.instant(options.to, in: options.timeZone), subjects: options.subjects,
                    limit: 10_000)
                let count = try await Self.exportSQLite(from: store, types: types, query: query, to: path)
                console.err("exported \(count) samples to \(path)\n")
                return .success
            }
            // Written page by page as the store reads them: memory is one page, whatever the export's size.
            var file: PrivateFile?
            if let path = options.out {
                do throws(PrivateFile.Failure) {
                    file = try PrivateFile(creating: path)
                } catch {
                    console.error("cannot write \(path): \(error.message)")
                    return .ioError
                }
            }
            let progress = console.showsProgress(dataOnTerminal: options.out == nil) ? CountProgress(console) : nil
            let output = OutputBuffer { bytes throws(PrivateFile.Failure) in
                if let file { try file.write(bytes) } else { console.outBytes(bytes) }
            }
            let query = SampleQuery(
                type: .heartRate, from: StoreOptions.instant(options.from, in: options.timeZone),
                to: StoreOptions.instant(options.to, in: options.timeZone), subjects: options.subjects)
            do {
                if format == .gpx {
                    let written = try await Self.writeGPX(of: store, query, to: output)
                    if let file, let path = options.out {
                        try file.finish()
                        console.err(
                            "exported \(written.routes) routes (\(written.locations) locations) of \(written.workouts) "
                                + "workouts to \(path)\n")
                    }
                    return .success
                }
                let count = try await Self.write(
                    types, of: store, query, format: format, to: output, progress: progress)
                progress?.end()
                if let file, let path = options.out {
                    try file.finish()  // after the last page: an export cut short leaves no file
                    console.err("exported \(count) samples to \(path)\n")
                }
            } catch let failure as PrivateFile.Failure {
                progress?.end()
                console.error("cannot write \(options.out ?? "stdout"): \(failure.message)")
                return .ioError
            }
            return .success
        }
    }

    /// How much of the workouts' routes a GPX export wrote.
    struct RoutesWritten {
        var workouts = 0
        var routes = 0
        var locations = 0
    }

    /// One page of the workouts `query` selects, their routes as GPX tracks (``GPXWriter``), what they held added to
    /// `written`; the cursor of the next page.
    static func gpxPage(_ query: SampleQuery, of store: any HealthStoreEngine, written: inout RoutesWritten)
        async throws -> (text: String, next: SampleCursor?)
    {
        var text = ""
        let page = try await store.workouts(query, as: .owner)
        for workout in page.workouts where !workout.routes.isEmpty {
            text += try GPXWriter.tracks(of: workout)
            written.workouts += 1
            written.routes += workout.routes.count
            written.locations += workout.routeLocationCount
        }
        return (text, page.next)
    }

    /// Writes the routes of the workouts `query` selects (its type aside) as one GPX document, page by page.
    static func writeGPX(of store: any HealthStoreEngine, _ base: SampleQuery, to output: OutputBuffer) async throws
        -> RoutesWritten
    {
        var query = base
        query.type = .workout
        query.limit = pageSize
        output.append(GPXWriter.header)
        var written = RoutesWritten()
        while true {
            let (text, next) = try await gpxPage(query, of: store, written: &written)
            output.append(text)
            try output.flushWhenFull()
            guard let next else { break }
            query.cursor = next
        }
        output.append(GPXWriter.footer)
        try output.flush()
        return written
    }

    /// Every type an export holds: samples, heartbeat series, correlations and workouts.
    static let exportedTypes = HealthTypeCatalog.all.filter {
        $0.isSampleType || $0.kind == .series || $0.kind == .correlation || $0.kind == .workout
    }

    /// `types` in the order an export writes them: correlations first (their members are written with them, not
    /// again as samples of their own), then workouts, then the rest.
    static func inExportOrder(_ types: [HealthType]) -> [HealthType] {
        types.filter { $0.kind == .correlation } + types.filter { $0.kind == .workout }
            + types.filter { $0.kind != .correlation && $0.kind != .workout }
    }

    /// One page of what `query` selects of its type, as lines of `format`: correlations (their members' ids added
    /// to `members`), workouts (each with the ids of its associated samples), heartbeat series, or samples (less
    /// `members`, written with their correlations); how many were written, and the cursor of the next page.
    static func page(
        _ query: SampleQuery, of store: any HealthStoreEngine, format: Format, members: inout Set<UUID>
    ) async throws -> (text: String, count: Int, next: SampleCursor?) {
        var text = ""
        let type = query.type
        if type.kind == .correlation {
            let page = try await store.correlations(query, as: .owner)
            for correlation in page.correlations {
                members.formUnion(correlation.objects.map(\.id))
                text += lines(correlation, format: format)
            }
            return (text, page.correlations.count, page.next)
        }
        if type.kind == .workout {
            let page = try await store.workouts(query, as: .owner)
            for workout in page.workouts {
                let ids = try await store.workoutSampleIDs(workout.id, as: .owner)
                text += lines(workout, samples: ids.sorted { $0.key < $1.key }.flatMap(\.value), format: format)
            }
            return (text, page.workouts.count, page.next)
        }
        if type.aggregation == .series {
            let page = try await store.heartbeatSeries(query, as: .owner)
            for series in page.series { text += lines(series, format: format) }
            return (text, page.series.count, page.next)
        }
        let page = try await store.samples(query, as: .owner)
        var count = 0
        for sample in page.samples where !members.contains(sample.id) {
            text += lines(sample, format: format)
            count += 1
        }
        return (text, count, page.next)
    }

    /// Writes the samples of `types` in `store` that `query` selects (its type aside) in `format` (csv, ndjson or
    /// fhir) to `output`, page by page as the store reads them (memory is one page, whatever the export's size),
    /// and returns how many were written. Quantity and category samples are read as columns and written by
    /// ``SampleLineWriter``; with `columns: false` they are read as sample values and each written by ``lines(_:format:)``
    /// (the general writer alone, which the tests compare the fast path with).
    static func write(
        _ types: [HealthType], of store: any HealthStoreEngine, _ query: SampleQuery, format: Format,
        to output: OutputBuffer, progress: CountProgress? = nil, columns: Bool = true
    ) async throws -> Int {
        if format == .csv { output.append(Self.csvHeader) }
        var writer = SampleLineWriter.export(format)
        var count = 0
        var members: Set<UUID> = []
        for type in types {
            let sampled = type.kind != .correlation && type.kind != .workout && type.aggregation != .series
            var query = query
            query.type = type
            if sampled, columns {
                // A correlation's members went out with it (correlation types come first).
                query.limit = Self.columnsPageSize
                var page = try await store.sampleColumns(query, as: .owner)
                while true {
                    // The next page is read (on the store's executor) while this one is written.
                    var following: SampleQuery?
                    if let next = page.next {
                        following = query
                        following?.cursor = next
                    }
                    let upcomingQuery = following
                    async let upcoming = Self.columns(upcomingQuery, of: store)
                    count += try writer.write(page, skipping: members, to: output)
                    progress?.show(count)
                    guard let next = try await upcoming else { break }
                    page = next
                }
                continue
            }
            query.limit = Self.pageSize
            while true {
                let (text, written, next) = try await Self.page(query, of: store, format: format, members: &members)
                output.append(text)
                count += written
                try output.flushWhenFull()
                progress?.show(count)
                guard let next else { break }
                query.cursor = next
            }
        }
        try output.flush()
        return count
    }

    /// The page `query` reads as columns, if there is a query.
    private static func columns(_ query: SampleQuery?, of store: any HealthStoreEngine) async throws -> SampleColumns? {
        guard let query else { return nil }
        return try await store.sampleColumns(query, as: .owner)
    }

    /// How many correlations, workouts or heartbeat series one store query reads; each page is written before the
    /// next is read.
    static let pageSize = 2_000

    /// How many quantity and category samples one store query reads (as columns, ``SampleColumns``: about 44 bytes
    /// a sample, two pages held at a time).
    static let columnsPageSize = 65_536

    /// The CSV columns: those of `wearhouse samples --format csv`, and the metadata as one JSON object.
    static let csvHeader = "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject,metadata\n"

    /// A quantity sample in `format`: one line.
    static func lines(_ sample: QuantitySample, format: Format) -> String {
        switch format {
        case .csv:
            SamplesCommand.fields(sample, valueName: false).map { SamplesCommand.csvCell($0.value) }.joined(
                separator: ",") + "\n"
        case .ndjson: FieldValue.object(openMHealth(sample)).json + "\n"
        case .fhir: FieldValue.object(fhirObservation(sample)).json + "\n"
        case .sqlite, .gpx: ""  // written by exportSQLite and writeGPX, not as lines
        }
    }

    /// A correlation in `format`: one line with its members (CSV: their rows and its own, ``ObjectRecords``).
    static func lines(_ correlation: Correlation, format: Format) -> String {
        switch format {
        case .csv: ObjectRecords.csv(correlation)
        case .ndjson: FieldValue.object(ObjectRecords.openMHealth(correlation)).json + "\n"
        case .fhir: FieldValue.object(ObjectRecords.fhir(correlation)).json + "\n"
        case .sqlite, .gpx: ""
        }
    }

    /// A workout in `format`, with the ids of its associated samples: one line.
    static func lines(_ workout: Workout, samples: [UUID], format: Format) -> String {
        switch format {
        case .csv: ObjectRecords.csv(workout, samples: samples)
        case .ndjson: FieldValue.object(ObjectRecords.openMHealth(workout, samples: samples)).json + "\n"
        case .fhir: FieldValue.object(ObjectRecords.fhir(workout)).json + "\n"
        case .sqlite, .gpx: ""
        }
    }

    /// A heartbeat series in `format`: in CSV one line per beat (its RR interval in ms at the beat's instant,
    /// `{"gap": true}` as metadata when a gap precedes it), else one line.
    static func lines(_ series: HeartbeatSeriesSample, format: Format) -> String {
        switch format {
        case .csv:
            let record = Record(series)
            let provenance = [
                FieldValue.string(series.source.identifier), series.source.version.map { .string($0) } ?? .null,
                series.device.map { .string($0.key) } ?? .null, series.device?.name.map { .string($0) } ?? .null,
                series.subject.map { .string($0) } ?? .null,
            ]
            return series.beats.map { beat in
                let instant = series.start.adding(milliseconds: Int64(beat.offsetMilliseconds.rounded(.down)))
                let cells: [FieldValue] =
                    [
                        .string(series.id.uuidString.lowercased()), .string(HealthType.heartbeatSeries.identifier),
                        time(instant, record), time(instant, record), .double(beat.rrMilliseconds), .string("ms"),
                    ] + provenance + [beat.precededByGap ? .string(#"{"gap":true}"#) : .null]
                return cells.map(SamplesCommand.csvCell).joined(separator: ",") + "\n"
            }.joined()
        case .ndjson: return FieldValue.object(openMHealth(series)).json + "\n"
        case .fhir: return FieldValue.object(fhirObservation(series)).json + "\n"
        case .sqlite, .gpx: return ""  // written by exportSQLite and writeGPX, not as lines
        }
    }

    /// What every exported sample carries besides its measure.
    struct Record {
        var id: UUID
        var type: HealthType
        var start: Instant
        var end: Instant
        var startOffsetSeconds: Int32
        var source: Source
        var device: Device?
        var subject: String?
        var metadata: [String: MetadataValue]

        init(_ sample: QuantitySample) {
            (id, type, start, end, startOffsetSeconds) = (
                sample.id, sample.type, sample.start, sample.end, sample.startOffsetSeconds
            )
            (source, device, subject, metadata) = (sample.source, sample.device, sample.subject, sample.metadata)
        }

        init(_ correlation: Correlation) {
            (id, type, start, end, startOffsetSeconds) = (
                correlation.id, correlation.type, correlation.start, correlation.end, correlation.startOffsetSeconds
            )
            (source, device, subject, metadata) = (
                correlation.source, correlation.device, correlation.subject, correlation.metadata
            )
        }

        init(_ workout: Workout) {
            (id, type, start, end, startOffsetSeconds) = (
                workout.id, .workout, workout.start, workout.end, workout.startOffsetSeconds
            )
            (source, device, subject, metadata) = (workout.source, workout.device, workout.subject, workout.metadata)
        }

        init(_ series: HeartbeatSeriesSample) {
            (id, type, start, end, startOffsetSeconds) = (
                series.id, .heartbeatSeries, series.start, series.end, series.startOffsetSeconds
            )
            (source, device, subject, metadata) = (series.source, series.device, series.subject, series.metadata)
        }
    }

    static func time(_ instant: Instant, _ record: Record) -> FieldValue {
        .string(StoreArguments.format(instant, offsetSeconds: record.startOffsetSeconds))
    }

    static func timeFrame(_ record: Record) -> FieldValue {
        if record.start == record.end { return .object([Field("date_time", time(record.start, record))]) }
        return .object([
            Field(
                "time_interval",
                .object([
                    Field("start_date_time", time(record.start, record)),
                    Field("end_date_time", time(record.end, record)),
                ]))
        ])
    }

    /// Metadata as a JSON object: strings, booleans and numbers as such (whole numbers up to 2^53 as integers),
    /// quantities as `{"value", "unit"}`, dates as `{"date_time"}`; `import-samples` reads each back as it was.
    static func metadata(_ metadata: [String: MetadataValue]) -> FieldValue {
        .object(
            metadata.sorted { $0.key < $1.key }.map { key, value in
                switch value {
                case .string(let text): Field(key, .string(text))
                case .number(let number): Field(key, .double(number))
                case .integer(let number): Field(key, .integer(number))
                case .bool(let flag): Field(key, .bool(flag))
                case .date(let instant):
                    Field(
                        key, .object([Field("date_time", .string(StoreArguments.format(instant, offsetSeconds: 0)))]))
                case .quantity(let number, let unit):
                    Field(key, .object([Field("value", .double(number)), Field("unit", .string(unit))]))
                }
            })
    }

    /// An Open mHealth data point for a heartbeat series: a wearhouse schema whose body lists the beats.
    static func openMHealth(_ series: HeartbeatSeriesSample) -> [Field] {
        let beats = FieldValue.list(
            series.beats.map { beat in
                .object([
                    Field("offset_ms", .double(beat.offsetMilliseconds)), Field("rr_ms", .double(beat.rrMilliseconds)),
                    Field("gap", .bool(beat.precededByGap)),
                ])
            })
        return openMHealth(
            Record(series), schema: ("wearhouse", "heartbeat-series", "1.0"), measure: Field("beats", beats))
    }

    /// An Open mHealth data point for a quantity or category sample: in the Open mHealth schema of its type
    /// (``OpenMHealthSchema``), else in wearhouse's own (`quantity: {value, unit}` in the canonical unit, or a
    /// category's `category: {value, name}`). A value the schema writes scaled is also kept exactly under
    /// `header.wearhouse.value`, for `import-samples`.
    static func openMHealth(_ sample: QuantitySample) -> [Field] {
        let record = Record(sample)
        var measures: [Field] = []
        if sample.type.kind == .category {
            measures.append(
                Field(
                    "category",
                    .object([
                        Field("value", .integer(Int64(sample.value))),
                        Field("name", .string(SamplesCommand.categoryName(sample))),
                    ])))
        }
        guard let schema = OpenMHealthSchema.of(sample) else {
            if sample.type.kind != .category {
                measures.append(
                    Field(
                        "quantity",
                        .object([
                            Field("value", .double(sample.value)), Field("unit", .string(sample.type.canonicalUnit)),
                        ])))
            }
            return openMHealth(
                record, schema: ("wearhouse", sample.type.identifier, "1.0"), measures: measures, extra: nil)
        }
        measures.append(
            Field(
                schema.field,
                .object([Field("value", .double(schema.measure(sample))), Field("unit", .string(schema.unit))])))
        if sample.type == .bodyTemperature,
            let location = OpenMHealthSchema.temperatureLocation(
                sample.metadata[MetadataKey.bodyTemperatureSensorLocation])
        {
            measures.append(Field("measurement_location", .string(location)))
        }
        return openMHealth(
            record, schema: ("omh", schema.name, schema.version), measures: measures,
            extra: schema.scale == 1 ? nil : Field("value", .double(sample.value)))
    }

    /// An Open mHealth data point; wearhouse's own fields go under `header.wearhouse`.
    static func openMHealth(
        _ sample: Record, schema: (namespace: String, name: String, version: String), measure: Field
    ) -> [Field] {
        openMHealth(sample, schema: schema, measures: [measure], extra: nil)
    }

    /// An Open mHealth data point with several measures in its body, and `extra` (when given) under
    /// `header.wearhouse`.
    static func openMHealth(
        _ sample: Record, schema: (namespace: String, name: String, version: String), measures: [Field],
        extra: Field?
    ) -> [Field] {
        var device: [Field] = []
        if let value = sample.device {
            for (name, text) in [
                ("key", value.key), ("name", value.name), ("manufacturer", value.manufacturer), ("model", value.model),
                ("hardware_version", value.hardwareVersion), ("firmware_version", value.firmwareVersion),
                ("software_version", value.softwareVersion), ("serial_number", value.serialNumber),
                ("local_identifier", value.localIdentifier),
            ] {
                if let text { device.append(Field(name, .string(text))) }
            }
        }
        let wearhouse: [Field] =
            [
                Field("type", .string(sample.type.identifier)),
                Field("source_version", sample.source.version.map { .string($0) } ?? .null),
                Field("device", device.isEmpty ? .null : .object(device)),
                Field("subject", sample.subject.map { .string($0) } ?? .null),
                Field("start_offset_s", .int(sample.startOffsetSeconds)),
                Field("metadata", metadata(sample.metadata)),
            ] + (extra.map { [$0] } ?? [])
        return [
            Field(
                "header",
                .object([
                    Field("id", .string(sample.id.uuidString.lowercased())),
                    Field(
                        "schema_id",
                        .object([
                            Field("namespace", .string(schema.namespace)), Field("name", .string(schema.name)),
                            Field("version", .string(schema.version)),
                        ])),
                    Field("creation_date_time", time(sample.start, sample)),
                    Field(
                        "acquisition_provenance",
                        .object([
                            Field("source_name", .string(sample.source.identifier)),
                            Field(
                                "modality",
                                .string(
                                    sample.metadata[MetadataKey.wasUserEntered] == .bool(true)
                                        ? "self-reported" : "sensed")),
                        ])),
                    Field("wearhouse", .object(wearhouse)),
                ])),
            Field(
                "body",
                .object(measures + [Field("effective_time_frame", timeFrame(sample))])),
        ]
    }

    /// A FHIR R4 Observation of a heartbeat series: one `component` per beat, its RR interval as a
    /// `valueQuantity` in ms, its offset from the start (ms) and whether a gap precedes it as extensions.
    static func fhirObservation(_ series: HeartbeatSeriesSample) -> [Field] {
        let components = FieldValue.list(
            series.beats.map { beat in
                .object([
                    Field("code", .object([Field("text", .string("rr-interval"))])),
                    Field(
                        "valueQuantity",
                        .object([
                            Field("value", .double(beat.rrMilliseconds)), Field("unit", .string("ms")),
                            Field("system", .string("http://unitsofmeasure.org")), Field("code", .string("ms")),
                        ])),
                    Field(
                        "extension",
                        .list([
                            .object([
                                Field("url", .string("urn:wearhouse:beat-offset-ms")),
                                Field("valueDecimal", .double(beat.offsetMilliseconds)),
                            ]),
                            .object([
                                Field("url", .string("urn:wearhouse:preceded-by-gap")),
                                Field("valueBoolean", .bool(beat.precededByGap)),
                            ]),
                        ])),
                ])
            })
        return fhirObservation(Record(series), category: "vital-signs", value: Field("component", components))
    }

    /// A FHIR R4 Observation with `value` (a `valueQuantity`, a `valueCodeableConcept` or the `component` list),
    /// coded with `codes` (LOINC code and display; by default the type's LOINC code), under `profile` when given.
    static func fhirObservation(
        _ sample: Record, category: String, codes: [(String, String)]? = nil, profile: String? = nil, value: Field
    ) -> [Field] {
        var coding: [FieldValue] = []
        let given = codes ?? sample.type.loinc.map({ [($0, "")] }) ?? []
        for (code, display) in given {
            var entry = [Field("system", .string("http://loinc.org")), Field("code", .string(code))]
            if !display.isEmpty { entry.append(Field("display", .string(display))) }
            coding.append(.object(entry))
        }
        var fields: [Field] = [
            Field("resourceType", .string("Observation")),
            Field("id", .string(sample.id.uuidString.lowercased())),
        ]
        if let profile { fields.append(Field("meta", .object([Field("profile", .list([.string(profile)]))]))) }
        fields += [
            Field(
                "identifier",
                .list([
                    .object([
                        Field("system", .string("urn:ietf:rfc:3986")),
                        Field("value", .string("urn:uuid:\(sample.id.uuidString.lowercased())")),
                    ])
                ])),
            Field("status", .string("final")),
            Field(
                "category",
                .list([
                    .object([
                        Field(
                            "coding",
                            .list([
                                .object([
                                    Field(
                                        "system", .string("http://terminology.hl7.org/CodeSystem/observation-category")),
                                    Field("code", .string(category)),
                                    Field("display", .string(category == "vital-signs" ? "Vital Signs" : "Activity")),
                                ])
                            ]))
                    ])
                ])),
            // FHIR allows no empty list: a type without a LOINC code has only the text.
            Field(
                "code",
                .object(
                    (coding.isEmpty ? [] : [Field("coding", .list(coding))])
                        + [Field("text", .string(sample.type.identifier))])),
        ]
        if let subject = sample.subject {
            fields.append(Field("subject", .object([Field("display", .string(subject))])))
        }
        if sample.start == sample.end {
            fields.append(Field("effectiveDateTime", time(sample.start, sample)))
        } else {
            fields.append(
                Field(
                    "effectivePeriod",
                    .object([Field("start", time(sample.start, sample)), Field("end", time(sample.end, sample))])))
        }
        if let device = sample.device {
            fields.append(
                Field(
                    "device",
                    .object([
                        Field("display", .string([device.name, device.key].compactMap { $0 }.joined(separator: " ")))
                    ])))
        }
        fields.append(value)
        return fields
    }
}

/// An export file written piece by piece, whole or not at all, mode 0600 whatever the umask (an export is health
/// data): into a new file beside `path`, synced and renamed over it by ``finish()``; removed when dropped
/// unfinished (an error, a broken pipe).
final class PrivateFile {
    struct Failure: Error {
        var message: String
    }

    let path: String
    let temporary: String
    private var descriptor: Int32
    private var finished = false
    /// Bytes written; where the range last handed to the disk (``writeBack()``) starts and ends.
    private var written: Int64 = 0
    private var handedFrom: Int64 = 0
    private var handedTo: Int64 = 0

    /// How many bytes are written between two hand-overs to the disk.
    static let writeBackSize: Int64 = 8 << 20

    init(creating path: String) throws(Failure) {
        self.path = path
        temporary = "\(path).\(getpid()).partial"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Failure(message: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
    }

    func write(_ text: String) throws(Failure) {
        var text = text
        var failure: Failure?
        text.withUTF8 { bytes in
            do throws(Failure) {
                try write(UnsafeRawBufferPointer(bytes))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let result = Glibc.write(descriptor, base + done, bytes.count - done)
            if result > 0 {
                done += result
            } else if result < 0, errno == EINTR {
                continue
            } else {
                throw Failure(message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
        }
        written += Int64(done)
        if written - handedTo >= Self.writeBackSize { writeBack() }
    }

    /// Hands what was written since the last hand-over to the disk now, so that it is written while the export
    /// goes on and ``finish()``'s `fsync` waits only for the end (an export of hundreds of megabytes took as long
    /// again in that `fsync` when the kernel held it all): `POSIX_FADV_DONTNEED` starts the writeback of a range's
    /// dirty pages and drops those already written, which keeps the export from filling the page cache too. Only
    /// a hint: an error changes nothing (the `fsync` still decides).
    private func writeBack() {
        // The range handed over last time again (by now written: dropped), and what is new (written from now).
        _ = posix_fadvise(descriptor, off_t(handedFrom), off_t(written - handedFrom), POSIX_FADV_DONTNEED)
        handedFrom = handedTo
        handedTo = written
    }

    /// Syncs the file and renames it to `path`.
    func finish() throws(Failure) {
        guard fsync(descriptor) == 0 else {
            throw Failure(message: "cannot sync \(temporary): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        descriptor = -1
        guard rename(temporary, path) == 0 else {
            throw Failure(message: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
        finished = true
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !finished { unlink(temporary) }
    }
}
