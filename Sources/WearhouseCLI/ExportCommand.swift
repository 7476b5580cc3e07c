import Foundation
import GATT
import Health
import SQLiteStore

/// `wearhouse export`: samples as CSV, Open mHealth NDJSON or FHIR R4 Observations (NDJSON), each carrying
/// its id, so re-importing an export is idempotent.
struct ExportCommand: Command {
    let name = "export"
    let abstract = "Export samples as CSV, Open mHealth NDJSON or FHIR R4 NDJSON."
    var discussion: String {
        """
        ndjson: one Open mHealth data point a line (heart-rate 2.0, step-count 3.0, and a wearhouse schema for the
        other types), with the sample's source, device, subject and metadata under header.wearhouse;
        'wearhouse import-samples' reads it back. fhir: one R4 Observation a line, LOINC 8867-4 for heart rate
        and 55423-8 for steps, UCUM units, the sample id as identifier urn:uuid:<id>.
        """
    }

    /// What `--format` names.
    enum Format: String, CaseIterable, Sendable {
        case csv, ndjson, fhir
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
        .choice("format", \.format, required: true, help: "What to write: CSV, Open mHealth NDJSON or FHIR R4 NDJSON."),
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
            let types = options.types ?? HealthTypeCatalog.all.filter { $0.aggregation != .series }
            let store = try StoreLocation.open(store: options.store, mustExist: true)
            var output =
                format == .csv
                ? "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject\n" : ""
            var count = 0
            for type in types {
                var query = SampleQuery(
                    type: type, from: StoreOptions.instant(options.from, in: options.timeZone),
                    to: StoreOptions.instant(options.to, in: options.timeZone), subjects: options.subjects,
                    limit: 10_000)
                while true {
                    let page = try await store.samples(query, as: .owner)
                    for sample in page.samples {
                        switch format {
                        case .csv:
                            output +=
                                SamplesCommand.fields(sample).map { SamplesCommand.csvCell($0.value) }.joined(
                                    separator: ",") + "\n"
                        case .ndjson: output += FieldValue.object(Self.openMHealth(sample)).json + "\n"
                        case .fhir: output += FieldValue.object(Self.fhirObservation(sample)).json + "\n"
                        }
                    }
                    count += page.samples.count
                    guard let next = page.next else { break }
                    query.cursor = next
                }
            }
            if let path = options.out {
                do {
                    try output.write(toFile: path, atomically: true, encoding: .utf8)
                } catch {
                    console.error("cannot write \(path): \(error.localizedDescription)")
                    return .ioError
                }
                console.err("exported \(count) samples to \(path)\n")
            } else {
                console.out(output)
            }
            return .success
        }
    }

    static func time(_ instant: Instant, _ sample: QuantitySample) -> FieldValue {
        .string(StoreArguments.format(instant, offsetSeconds: sample.startOffsetSeconds))
    }

    static func timeFrame(_ sample: QuantitySample) -> FieldValue {
        if sample.start == sample.end { return .object([Field("date_time", time(sample.start, sample))]) }
        return .object([
            Field(
                "time_interval",
                .object([
                    Field("start_date_time", time(sample.start, sample)),
                    Field("end_date_time", time(sample.end, sample)),
                ]))
        ])
    }

    static func metadata(_ metadata: [String: MetadataValue]) -> FieldValue {
        .object(
            metadata.sorted { $0.key < $1.key }.map { key, value in
                switch value {
                case .string(let text): Field(key, .string(text))
                case .number(let number): Field(key, .double(number))
                case .integer(let number): Field(key, .integer(number))
                case .bool(let flag): Field(key, .bool(flag))
                case .date(let instant): Field(key, .string(StoreArguments.format(instant, offsetSeconds: 0)))
                case .quantity(let number, let unit):
                    Field(key, .object([Field("value", .double(number)), Field("unit", .string(unit))]))
                }
            })
    }

    /// An Open mHealth data point; wearhouse's own fields go under `header.wearhouse`.
    static func openMHealth(_ sample: QuantitySample) -> [Field] {
        let schema: (namespace: String, name: String, version: String, field: String, unit: String) =
            switch sample.type.identifier {
            case "heartRate": ("omh", "heart-rate", "2.0", "heart_rate", "beats/min")
            case "stepCount": ("omh", "step-count", "3.0", "step_count", "steps")
            default: ("wearhouse", sample.type.identifier, "1.0", "quantity", sample.type.canonicalUnit)
            }
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
        let wearhouse: [Field] = [
            Field("type", .string(sample.type.identifier)),
            Field("source_version", sample.source.version.map { .string($0) } ?? .null),
            Field("device", device.isEmpty ? .null : .object(device)),
            Field("subject", sample.subject.map { .string($0) } ?? .null),
            Field("start_offset_s", .int(sample.startOffsetSeconds)),
            Field("metadata", metadata(sample.metadata)),
        ]
        return [
            Field(
                "header",
                .object([
                    Field("uuid", .string(sample.id.uuidString.lowercased())),
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
                .object([
                    Field(
                        schema.field,
                        .object([Field("value", .double(sample.value)), Field("unit", .string(schema.unit))])),
                    Field("effective_time_frame", timeFrame(sample)),
                ])),
        ]
    }

    /// A FHIR R4 Observation.
    static func fhirObservation(_ sample: QuantitySample) -> [Field] {
        let ucum: (unit: String, code: String) =
            switch sample.type.canonicalUnit {
            case "count/min": (sample.type.identifier == "heartRate" ? "beats/minute" : "/min", "/min")
            case "count":
                (
                    sample.type.identifier == "stepCount" ? "steps" : "count",
                    sample.type.identifier == "stepCount" ? "{steps}" : "1"
                )
            default: (sample.type.canonicalUnit, sample.type.canonicalUnit)
            }
        let category =
            sample.type.identifier == "heartRate" || sample.type.identifier == "heartRateVariabilitySDNN"
            ? "vital-signs" : "activity"
        var coding: [FieldValue] = []
        if let loinc = sample.type.loinc {
            coding.append(.object([Field("system", .string("http://loinc.org")), Field("code", .string(loinc))]))
        }
        var fields: [Field] = [
            Field("resourceType", .string("Observation")),
            Field("id", .string(sample.id.uuidString.lowercased())),
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
                                ])
                            ]))
                    ])
                ])),
            Field("code", .object([Field("coding", .list(coding)), Field("text", .string(sample.type.identifier))])),
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
        fields.append(
            Field(
                "valueQuantity",
                .object([
                    Field("value", .double(sample.value)), Field("unit", .string(ucum.unit)),
                    Field("system", .string("http://unitsofmeasure.org")), Field("code", .string(ucum.code)),
                ])))
        return fields
    }
}
