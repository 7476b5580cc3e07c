import Foundation
import Health
import SQLiteStore

/// `wearhouse import-samples FILE`: samples from elsewhere, one JSON object a line, in the shape
/// `wearhouse samples --format json` prints. Validated line by line; the file is saved as one batch, so a bad
/// line leaves the store untouched.
struct ImportSamplesCommand: Command {
    let name = "import-samples"
    let abstract = "Import samples from a JSON-lines file (the shape 'samples --format json' prints)."
    var discussion: String {
        """
        Each line: {"type": "heartRate", "start": "2025-03-30T10:00:00+02:00", "end": "...", "value": 62,
        "unit": "count/min", "source": "com.example.app", "device": "A0:9E:1A:00:00:01", "subject": "alice",
        "uuid": "...", "metadata": {"externalUUID": "...", "syncVersion": 2}}. end, unit (default: the type's),
        device, subject, uuid and metadata are optional; times need an offset or Z. Importing the same file
        twice stores nothing new.
        """
    }

    struct Options: CommandOptions {
        var file = ""
        var source = "wearhouse.import"
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required("file|-", \.file, kind: .path, help: "The JSON-lines file, or - for standard input.")
        ],
        options: [
            .text("source", value: "id", \.source, help: "Source for lines without one."), StoreOptions.store(\.store),
        ])

    struct LineError: Error { var line: Int; var message: String }

    func run(_ options: Options, console: Console) async -> ExitCode {
        let file = options.file
        let text: String
        if file == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: file) else {
                console.error("cannot read \(file)")
                return .noInput
            }
            text = String(decoding: data, as: UTF8.self)
        }
        var samples: [QuantitySample] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = String(line).trimmingSpaces
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do {
                samples.append(
                    try Self.sample(from: trimmed, defaultSource: options.source))
            } catch {
                console.error("\(file == "-" ? "stdin" : file):\(index + 1): \(error.message); nothing was imported")
                return .dataError
            }
        }
        do {
            let store = try StoreLocation.open(store: options.store, mustExist: false)
            let outcomes = try await store.save(samples, as: .owner)
            let counts = Dictionary(grouping: outcomes, by: { $0 }).mapValues(\.count)
            let summary = [WriteOutcome.inserted, .duplicate, .conflict, .replaced, .stale].map {
                "\(counts[$0] ?? 0) \($0.rawValue)"
            }
            console.out("\(samples.count) samples: \(summary.joined(separator: ", "))\n")
            return .success
        } catch let failure as StoreLocation.Failure {
            console.error(failure.message)
            return failure.code
        } catch let invalid as InvalidSampleError {
            console.error("\(invalid); nothing was imported")
            return .dataError
        } catch {
            console.error("\(error)")
            return .ioError
        }
    }

    static func sample(from line: String, defaultSource: String) throws(LineError) -> QuantitySample {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        guard var object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            throw fail("not a JSON object")
        }
        if object["header"] != nil, object["body"] != nil { object = try flatten(openMHealth: object) }
        guard let typeName = object["type"] as? String else { throw fail("missing \"type\"") }
        guard let type = HealthTypeCatalog.type(typeName) else { throw fail("unknown type '\(typeName)'") }
        guard let startText = object["start"] as? String else { throw fail("missing \"start\"") }
        let (start, offset) = try time(startText, field: "start")
        var end = start
        if let endText = object["end"] as? String { end = try time(endText, field: "end").0 }
        guard let number = object["value"] as? NSNumber, !isJSONBoolean(number) else {
            throw fail("missing or non-numeric \"value\"")
        }
        var value = number.doubleValue
        if let unitText = object["unit"] as? String, unitText != type.canonicalUnit {
            do {
                value = try HealthUnit(unitText).convert(value, to: HealthUnit(type.canonicalUnit))
            } catch {
                throw fail("unit '\(unitText)': \(error)")
            }
        }
        var metadata: [String: MetadataValue] = [:]
        if let raw = object["metadata"] as? [String: Any] {
            for (key, item) in raw {
                if let text = item as? String {
                    metadata[key] = .string(text)
                } else if let number = item as? NSNumber {
                    metadata[key] =
                        isJSONBoolean(number)
                        ? .bool(number.boolValue)
                        : jsonInteger(number).map { .integer($0) } ?? .number(number.doubleValue)
                } else if let quantity = item as? [String: Any], let number = quantity["value"] as? NSNumber,
                    let unit = quantity["unit"] as? String
                {
                    metadata[key] = .quantity(number.doubleValue, unit: unit)
                } else {
                    throw fail("metadata '\(key)' must be a string, number or boolean")
                }
            }
        }
        var id = UUID.timeOrdered()
        if let text = object["uuid"] as? String {
            guard let parsed = UUID(uuidString: text) else { throw fail("\"uuid\" '\(text)' is not a UUID") }
            id = parsed
        }
        var device = (object["device"] as? String).map {
            Device(name: object["device_name"] as? String, localIdentifier: $0)
        }
        if let fields = object["device"] as? [String: Any] {
            device = Device(
                name: fields["name"] as? String, manufacturer: fields["manufacturer"] as? String,
                model: fields["model"] as? String, hardwareVersion: fields["hardware_version"] as? String,
                firmwareVersion: fields["firmware_version"] as? String,
                softwareVersion: fields["software_version"] as? String,
                serialNumber: fields["serial_number"] as? String, localIdentifier: fields["local_identifier"] as? String
            )
        }
        return QuantitySample(
            id: id, type: type, start: start, end: end, startOffsetSeconds: offset, value: value,
            source: Source(
                identifier: object["source"] as? String ?? defaultSource, version: object["source_version"] as? String),
            device: device, subject: object["subject"] as? String, metadata: metadata)
    }

    /// An Open mHealth data point (as `wearhouse export --format ndjson` writes it) in the flat shape.
    static func flatten(openMHealth point: [String: Any]) throws(LineError) -> [String: Any] {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        guard let header = point["header"] as? [String: Any], let body = point["body"] as? [String: Any] else {
            throw fail("\"header\" and \"body\" must be objects")
        }
        let extra = header["wearhouse"] as? [String: Any] ?? [:]
        let schema = (header["schema_id"] as? [String: Any])?["name"] as? String
        var flat: [String: Any] = [:]
        flat["type"] = extra["type"] ?? ["heart-rate": "heartRate", "step-count": "stepCount"][schema ?? ""]
        flat["uuid"] = header["uuid"]
        flat["source"] = (header["acquisition_provenance"] as? [String: Any])?["source_name"]
        for key in ["source_version", "device", "subject", "metadata"] where !(extra[key] is NSNull) {
            flat[key] = extra[key]
        }
        guard
            let (_, measure) = body.first(where: {
                $0.key != "effective_time_frame" && ($0.value as? [String: Any])?["value"] != nil
            }),
            let quantity = measure as? [String: Any]
        else { throw fail("body has no {\"value\", \"unit\"} measure") }
        flat["value"] = quantity["value"]
        if let unit = quantity["unit"] as? String {
            flat["unit"] = ["beats/min": "count/min", "steps": "count"][unit] ?? unit
        }
        let frame = body["effective_time_frame"] as? [String: Any] ?? [:]
        if let instant = frame["date_time"] {
            flat["start"] = instant
        } else if let interval = frame["time_interval"] as? [String: Any] {
            flat["start"] = interval["start_date_time"]
            flat["end"] = interval["end_date_time"]
        } else {
            throw fail("body.effective_time_frame needs date_time or time_interval")
        }
        return flat
    }

    /// An ISO 8601 instant with `Z` or `±HH:MM`, and that offset in seconds.
    static func time(_ text: String, field: String) throws(LineError) -> (Instant, Int32) {
        guard case .instant(let instant)? = try? StatisticsTime(parsing: text) else {
            throw LineError(line: 0, message: "\"\(field)\" '\(text)' is not an ISO 8601 time with Z or an offset")
        }
        var offset: Int32 = 0
        if !text.hasSuffix("Z"), text.count > 6 {
            let suffix = text.suffix(6)
            let sign: Int32 = suffix.first == "-" ? -1 : 1
            let digits = suffix.dropFirst().split(separator: ":").compactMap { Int32($0) }
            if digits.count == 2 { offset = sign * (digits[0] * 3600 + digits[1] * 60) }
        }
        return (instant, offset)
    }
}

/// Whether Foundation decoded this JSON value from `true`/`false` rather than a number (on Linux both arrive as
/// `NSNumber`, and `is Bool` is true for 0 and 1 too).
func isJSONBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c"
}

/// The value of a JSON number written without a fraction or an exponent, when it fits an Int64 (metadata keeps it
/// an integer, so that it is exported as one).
func jsonInteger(_ number: NSNumber) -> Int64? {
    switch String(cString: number.objCType) {
    case "q", "i", "l", "s": number.int64Value
    case "Q": number.uint64Value <= UInt64(Int64.max) ? Int64(number.uint64Value) : nil
    default: nil
    }
}
