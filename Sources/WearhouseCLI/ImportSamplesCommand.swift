import Foundation
import Health
import HealthImports
import SQLiteStore
import StoreEngine
import Support

/// `wearhouse import-samples FILE`: samples from elsewhere, one JSON object a line, in the shape
/// `wearhouse samples --format json` prints. Read, validated and saved in batches of bounded size, all of them in
/// one store transaction (``HealthStoreEngine/saveAll(as:_:)``), so memory stays flat whatever the file's size
/// and a bad line (or a kill) leaves the store untouched.
struct ImportSamplesCommand: Command {
    let name = "import-samples"
    let abstract = "Import samples from a JSON-lines file (the shape 'samples --format json' prints)."
    var discussion: String {
        """
        Each line: {"type": "heartRate", "start": "2025-03-30T10:00:00+02:00", "end": "...", "value": 62,
        "unit": "count/min", "source": "com.example.app", "device": "A0:9E:1A:00:00:01", "subject": "alice",
        "uuid": "...", "metadata": {"externalUUID": "...", "syncVersion": 2}}. end, unit (default: the type's),
        device, subject, uuid and metadata are optional (null is the same as absent); a heartbeatSeries line has
        "beats": [{"offset_ms", "rr_ms", "gap"}] instead of value. Times are RFC 3339 with Z or an offset; digits
        past milliseconds are dropped. A field of the wrong JSON type, a name over 256 bytes, metadata over 64 keys
        or a metadata string over 4,096 bytes, a line over 16 MiB, more than 100,000 beats, or a sample spanning
        more than a day (a week for cumulative types) is refused with its line number. Importing the same file
        twice stores nothing new. A correlation line (type bloodPressure or food) lists its samples, whole, in
        "objects"; a workout line has "activity_type", "duration_s", "total_energy_burned_kcal",
        "total_distance_m", "total_swimming_stroke_count", "total_flights_climbed", "events" [{"type", "start",
        "end", "metadata"}], "routes" [{"metadata", "locations": [[time, latitude, longitude, altitude_m,
        horizontal_accuracy_m, vertical_accuracy_m, speed_m_per_s, course_deg], ...]}] (null for what is not known)
        and "samples" (ids of stored or imported samples), as 'samples --format json' and 'export --format ndjson'
        write them.

        The file is read and saved in batches of at most \(ImportReader.batchLines) lines, so memory stays flat
        whatever its size, and all the batches go into one store transaction: a bad line, a refused sample, an
        error or the process being killed leaves the store as it was (nothing of the file is stored); a correlation
        goes in with its batch, and so does a workout (at most \(ImportReader.maximumObjects) a file), routes and all;
        the samples a workout lists are associated with it once every batch is in. A progress bar shows on a terminal when the file is a regular
        file.

        An Apple Health export (export.zip from the Health app, read in place, or the unpacked export.xml; found
        from the file's first bytes) is imported the same way: its records, correlations, workouts, heartbeat
        series and characteristics, every id derived from the sample's type, source, device, start and end, so
        that running it again (after an interruption, or with a newer export) stores only what is new. The summary
        counts what the model cannot hold, with the reason (docs/apple-health-import.md).

        Gadgetbridge's database (the file 'Gadgetbridge' its Export database writes; found from the SQLite header
        and its DEVICE and ..._SAMPLE tables) is read only and imported the same way: the activity samples of Mi
        Band / Amazfit, Huami, Pebble, PineTime, Fossil Hybrid HR and Garmin as stepCount (a row's steps over the
        time to the next row, 60 s at most a gap of 15 minutes), heartRate (Gadgetbridge's markers of no
        measurement, -1, 0 and 255, counted, not stored) and sleepAnalysis (consecutive minutes of one stage
        merged), each with its DEVICE (name, manufacturer, model, MAC, firmware) and the source Gadgetbridge.
        Tables of other families and other tables are named in the summary with their rows
        (docs/gadgetbridge-import.md).

        The summary gives, per type, how many samples were read, how many are new in the store and how many it
        held already, and how many values were converted from another unit; then what was not imported, and why.
        A progress bar shows on stderr when it is a terminal.
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

    struct LineError: Error {
        var line: Int
        var message: String
        /// The file could not be read there (an I/O error, not bad data).
        var isRead = false
    }

    func run(_ options: Options, console: Console) async -> ExitCode {
        let file = options.file
        if file != "-", let kind = GadgetbridgeDatabase.kind(ofFileAt: file) {
            guard kind == .gadgetbridge else {
                console.error(
                    "\(file) is an SQLite database without Gadgetbridge's tables (DEVICE and ..._SAMPLE); "
                        + "nothing was imported")
                return .dataError
            }
            return await GadgetbridgeImport.run(file: file, options: options, console: console)
        }
        if file != "-", let format = AppleHealthExport.format(ofFileAt: file) {
            return await AppleHealthImport.run(file: file, format: format, options: options, console: console)
        }
        let name = file == "-" ? "stdin" : file
        let descriptor = file == "-" ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            console.error("cannot read \(file): \(String(cString: strerror(errno)))")
            return .noInput
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var status = stat()
        let size = fstat(descriptor, &status) == 0 && status.st_mode & 0o170000 == 0o100000 ? Int64(status.st_size) : 0
        let bar = console.isTerminal && size > 0 ? ProgressBar(console: console) : nil
        var progress: (@Sendable (Double) -> Void)?
        if let bar { progress = { @Sendable fraction in bar.show(fraction) } }
        let lines = LineReader(descriptor: descriptor, maximumLineBytes: Self.maximumLineBytes)
        let reader = ImportReader(lines: lines, defaultSource: options.source, size: size, progress: progress)
        do {
            let store = try StoreLocation.open(store: options.store, mustExist: false)
            let counts = try await store.saveAll(as: .owner) { try reader.next() }
            bar?.end()
            // The workouts went in with their batches; their samples (which may be anywhere in the file) now.
            for (workout, ids) in reader.associations {
                _ = try await store.add(ids, to: workout, as: .owner)
            }
            let summary = [WriteOutcome.inserted, .duplicate, .conflict, .replaced, .stale].map {
                "\(counts[$0] ?? 0) \($0.rawValue)"
            }
            console.out("\(counts.values.reduce(0, +)) samples: \(summary.joined(separator: ", "))\n")
            return .success
        } catch let failure as StoreLocation.Failure {
            console.error(failure.message)
            return failure.code
        } catch let bad as LineError {
            bar?.end()
            console.error("\(name):\(bad.line): \(bad.message); nothing was imported")
            return bad.isRead ? .ioError : .dataError
        } catch let invalid as InvalidSampleError {
            bar?.end()
            console.error(
                "\(name):\(reader.line(ofBatchIndex: invalid.index)): \(invalid.reason); nothing was imported")
            return .dataError
        } catch {
            bar?.end()
            console.error("\(error); nothing was imported")
            return .ioError
        }
    }

    /// The limits on one line, refused with the line number rather than stored: a line of at most
    /// ``maximumLineBytes``; identifiers (source, its version, device fields, subject, unit, metadata keys) of at
    /// most ``maximumNameBytes``; metadata of at most ``maximumMetadataKeys`` keys, strings of at most
    /// ``maximumMetadataStringBytes``; a series of at most ``maximumBeats`` beats; a sample spanning at most
    /// ``maximumSpanMilliseconds(_:)``.
    static let maximumLineBytes = 16 << 20
    static let maximumNameBytes = 256
    static let maximumMetadataKeys = 64
    static let maximumMetadataStringBytes = 4_096
    static let maximumBeats = 100_000

    /// The longest a sample may span: a day for discrete types and heartbeat series, a week for cumulative ones.
    static func maximumSpanMilliseconds(_ type: HealthType) -> Int64 {
        type.aggregation == .cumulative || type.kind == .workout ? 7 * 86_400_000 : 86_400_000
    }

    /// One line, as a quantity sample, a heartbeat series, a correlation with its members or a workout with the
    /// ids of its samples.
    enum Parsed {
        /// `keepsID`: the line named the sample's id, and it is not the one its natural key gives.
        case quantity(QuantitySample, keepsID: Bool)
        case series(HeartbeatSeriesSample)
        case correlation(Correlation)
        case workout(Workout, samples: [UUID])
    }

    static func sample(from line: String, defaultSource: String) throws(LineError) -> Parsed {
        guard line.utf8.count <= maximumLineBytes else {
            throw LineError(line: 0, message: "the line is longer than \(maximumLineBytes) bytes")
        }
        let value: JSONValue
        do throws(JSONSyntaxError) {
            value = try JSONReader.value(line, limits: JSONLimits(maximumDepth: 16, maximumLength: maximumLineBytes))
        } catch {
            throw LineError(line: 0, message: "not a JSON object (\(error))")
        }
        guard let object = value.members else { throw LineError(line: 0, message: "not a JSON object") }
        return try sample(from: object, defaultSource: defaultSource)
    }

    /// The sample one line's object describes: the flat form of docs/app-api.md, or an Open mHealth data point.
    static func sample(from line: [JSONField], defaultSource: String) throws(LineError) -> Parsed {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        var object = line
        if let header = object.present("header")?.members, object.present("body") != nil {
            // A correlation's or workout's data point carries its whole record.
            if let record = header.present("wearhouse")?.members?.present("record")?.members {
                object = record
            } else {
                object = try flatten(openMHealth: object)
            }
        }
        let fields = Fields(object)
        guard let typeName = try fields.name("type") else { throw fail("missing \"type\"") }
        guard let type = HealthTypeCatalog.type(typeName) else { throw fail("unknown type \(echo(typeName))") }
        guard let startText = try fields.string("start", limit: 64) else { throw fail("missing \"start\"") }
        let (start, offset) = try time(startText, field: "start")
        var end = start
        if let endText = try fields.string("end", limit: 64) { end = try time(endText, field: "end").0 }
        guard end >= start else { throw fail("\"end\" \(endText(end)) is before \"start\" \(startText)") }
        let span = end.milliseconds - start.milliseconds
        guard span <= maximumSpanMilliseconds(type) else {
            throw fail(
                "a \(type.identifier) sample may span at most \(maximumSpanMilliseconds(type) / 3_600_000) hours "
                    + "(this one spans \(span / 1_000) s)")
        }
        var id: UUID?
        if let text = try fields.string("uuid", limit: 64) {
            guard let parsed = UUID(uuidString: text) else { throw fail("\"uuid\" \(echo(text)) is not a UUID") }
            guard parsed.uuidString != "00000000-0000-0000-0000-000000000000" else {
                throw fail("\"uuid\" is the nil UUID")
            }
            id = parsed
        }
        let source = Source(
            identifier: try fields.name("source") ?? defaultSource, version: try fields.name("source_version"))
        let device = try fields.device()
        let subject = try fields.name("subject")
        let metadata = try fields.metadata()
        switch type.kind {
        case .correlation:
            guard let objects = object.present("objects")?.elements else {
                throw fail("a \(type.identifier) correlation needs \"objects\": a list of its samples")
            }
            guard objects.count <= Correlation.maximumObjects else {
                throw fail("a correlation holds at most \(Correlation.maximumObjects) samples, not \(objects.count)")
            }
            var members: [QuantitySample] = []
            for (index, raw) in objects.enumerated() {
                guard let member = raw.members else { throw fail("\"objects\" \(index + 1) is not an object") }
                let parsed: Parsed
                do throws(LineError) {
                    parsed = try sample(from: member, defaultSource: source.identifier)
                } catch {
                    throw fail("\"objects\" \(index + 1): \(error.message)")
                }
                guard case .quantity(var quantity, _) = parsed else {
                    throw fail("\"objects\" \(index + 1) is not a quantity sample")
                }
                if member.present("uuid") == nil, quantity.metadata[MetadataKey.externalUUID] == nil {
                    // A member without an id is named by its natural key, so that importing it again is a duplicate.
                    quantity.id = QuantitySample.derivedID(
                        type: quantity.type.identifier, source: quantity.source.identifier,
                        device: quantity.device?.key, start: quantity.start, end: quantity.end)
                }
                members.append(quantity)
            }
            let correlation = Correlation(
                id: id, type: type, start: start, end: end, startOffsetSeconds: offset, objects: members,
                source: source, device: device, subject: subject, metadata: metadata)
            if let reason = correlation.invalidityReason { throw fail(reason) }
            return .correlation(correlation)
        case .workout:
            let workout = try Self.workout(
                fields,
                base: Workout(
                    id: id, activityType: .other, start: start, end: end, startOffsetSeconds: offset, source: source,
                    device: device, subject: subject, metadata: metadata))
            if let reason = workout.0.invalidityReason { throw fail(reason) }
            return .workout(workout.0, samples: workout.1)
        default:
            break
        }
        if type.aggregation == .series {
            return .series(
                HeartbeatSeriesSample(
                    id: id, start: start, end: end, startOffsetSeconds: offset, beats: try fields.beats(),
                    source: source,
                    device: device, subject: subject, metadata: metadata))
        }
        guard type.isSampleType else {
            throw fail("\(type.identifier) is a \(type.kind.rawValue) type, which import-samples does not take")
        }
        if type.kind == .category {
            if let unit = try fields.name("unit"), !unit.isEmpty {
                throw fail("\(type.identifier) is a category and has no unit (found \(echo(unit)))")
            }
            return quantity(
                QuantitySample(
                    id: id ?? UUID.timeOrdered(), type: type, start: start, end: end, startOffsetSeconds: offset,
                    value: Double(try categoryValue(object.present("value"), of: type)), source: source,
                    device: device, subject: subject, metadata: metadata), named: id != nil)
        }
        guard var value = object.present("value")?.number else { throw fail("missing or non-numeric \"value\"") }
        if let unitText = try fields.name("unit"), unitText != type.canonicalUnit {
            do {
                value = try HealthUnit(unitText).convert(value, to: HealthUnit(type.canonicalUnit))
            } catch {
                throw fail("unit \(echo(unitText)): \(error)")
            }
        }
        return quantity(
            QuantitySample(
                id: id ?? UUID.timeOrdered(), type: type, start: start, end: end, startOffsetSeconds: offset,
                value: value, source: source, device: device, subject: subject, metadata: metadata), named: id != nil)
    }

    /// A quantity or category sample; one whose line `named` an id of its own keeps it (the batch's columnar
    /// path names a sample by its natural key).
    private static func quantity(_ sample: QuantitySample, named: Bool) -> Parsed {
        .quantity(sample, keepsID: named && !sample.hasDerivedID)
    }

    /// A workout's own fields (`activity_type`, `duration_s`, the totals, `events`) and the ids in `samples`, on
    /// top of `base`.
    static func workout(_ fields: Fields, base: Workout) throws(LineError) -> (Workout, [UUID]) {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        var workout = base
        guard let name = try fields.name("activity_type") else { throw fail("a workout needs \"activity_type\"") }
        guard let activity = WorkoutActivityType(name: name) else {
            throw fail("\(echo(name)) is not an HKWorkoutActivityType (running, walking, cycling, ..., other)")
        }
        workout.activityType = activity
        func number(_ key: String) throws(LineError) -> Double? {
            guard let value = fields.object.present(key) else { return nil }
            guard let number = value.number else { throw fail("\"\(key)\" must be a number") }
            return number
        }
        if let duration = try number("duration_s") { workout.duration = duration }
        workout.totalEnergyBurned = try number("total_energy_burned_kcal")
        workout.totalDistance = try number("total_distance_m")
        workout.totalSwimmingStrokeCount = try number("total_swimming_stroke_count")
        workout.totalFlightsClimbed = try number("total_flights_climbed")
        if let raw = fields.object.present("events") {
            guard let events = raw.elements, events.count <= Workout.maximumEvents else {
                throw fail("\"events\" must be a list of at most \(Workout.maximumEvents) events")
            }
            for (index, item) in events.enumerated() {
                guard let event = item.members else { throw fail("event \(index + 1) is not an object") }
                let eventFields = Fields(event)
                guard let kindName = try eventFields.name("type"), let kind = WorkoutEvent.Kind(name: kindName) else {
                    throw fail(
                        "event \(index + 1): \"type\" is one of "
                            + WorkoutEvent.Kind.allCases.map(\.name).joined(separator: ", "))
                }
                guard let startText = try eventFields.string("start", limit: 64) else {
                    throw fail("event \(index + 1): missing \"start\"")
                }
                let eventStart = try time(startText, field: "events.start").0
                let eventEnd = try eventFields.string("end", limit: 64).map { text throws(LineError) in
                    try time(text, field: "events.end").0
                }
                workout.events.append(
                    WorkoutEvent(kind, start: eventStart, end: eventEnd, metadata: try eventFields.metadata()))
            }
        }
        if let raw = fields.object.present("routes") {
            workout.routes = try routes(raw)
        }
        var ids: [UUID] = []
        if let raw = fields.object.present("samples") {
            guard let list = raw.elements, list.count <= 100_000 else {
                throw fail("\"samples\" must be a list of at most 100000 sample ids")
            }
            for item in list {
                guard let text = item.string, let id = UUID(uuidString: text) else {
                    throw fail("\"samples\" holds sample ids (UUIDs)")
                }
                ids.append(id)
            }
        }
        return (workout, ids)
    }

    /// A workout's `routes` as `export` writes them (``ObjectRecords/route(of:_:)``): a list of objects, each with
    /// `locations` (lists of a time and numbers in ``ObjectRecords/routeColumns``' order, `null` or left off at
    /// the end for what is not known), optional `metadata`, and `columns`, which when present must be that order.
    static func routes(_ raw: JSONValue) throws(LineError) -> [WorkoutRoute] {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        guard let list = raw.elements, list.count <= Workout.maximumRoutes else {
            throw fail("\"routes\" must be a list of at most \(Workout.maximumRoutes) routes")
        }
        var routes: [WorkoutRoute] = []
        var total = 0
        for (index, item) in list.enumerated() {
            let place = "route \(index + 1)"
            guard let members = item.members else { throw fail("\(place) is not an object") }
            let routeFields = Fields(members)
            if let columns = routeFields.object.present("columns") {
                guard let names = columns.elements?.map(\.string), names == ObjectRecords.routeColumns else {
                    throw fail(
                        "\(place): \"columns\" must be \(ObjectRecords.routeColumns.joined(separator: ", ")) in that order"
                    )
                }
            }
            guard let rows = routeFields.object.present("locations")?.elements else {
                throw fail("\(place): \"locations\" must be a list")
            }
            total += rows.count
            guard total <= Workout.maximumRouteLocations else {
                throw fail("a workout's routes hold at most \(Workout.maximumRouteLocations) locations")
            }
            var locations: [RouteLocation] = []
            locations.reserveCapacity(rows.count)
            for (row, value) in rows.enumerated() {
                let position = "\(place), location \(row + 1)"
                guard let numbers = value.elements, numbers.count >= 3, numbers.count <= 8 else {
                    throw fail("\(position) must be a list of a time and 2 to 7 numbers")
                }
                guard let text = numbers[0].string, text.utf8.count <= 64 else {
                    throw fail("\(position): the time must be an RFC 3339 string")
                }
                let time = try self.time(text, field: "routes.locations").0
                var known: [Double?] = []
                for (column, number) in numbers.dropFirst().enumerated() {
                    if case .null = number {
                        known.append(nil)
                        continue
                    }
                    guard let found = number.number else {
                        throw fail("\(position): \(ObjectRecords.routeColumns[column + 1]) must be a number or null")
                    }
                    known.append(found)
                }
                guard let latitude = known[0], let longitude = known[1] else {
                    throw fail("\(position): latitude and longitude must be numbers")
                }
                locations.append(
                    RouteLocation(
                        time: time, latitude: latitude, longitude: longitude, optionalNumbers: Array(known[2...])))
            }
            routes.append(WorkoutRoute(locations: locations, metadata: try routeFields.metadata()))
        }
        return routes
    }

    /// A category's value: one of its names (`"asleepDeep"`) or integers (`4`), nothing else.
    static func categoryValue(_ raw: JSONValue?, of type: HealthType) throws(LineError) -> Int {
        let allowed = type.values.map { "\($0.name) (\($0.value))" }.joined(separator: ", ")
        if let name = raw?.string {
            guard let value = type.value(named: name) else {
                throw LineError(
                    line: 0, message: "\(type.identifier) has no value \(echo(name)); it takes \(allowed)")
            }
            return value
        }
        guard let number = raw?.number else {
            throw LineError(
                line: 0, message: "missing \"value\": \(type.identifier) takes a name or integer of \(allowed)")
        }
        guard let value = Int(exactly: number), type.name(of: value) != nil else {
            throw LineError(line: 0, message: "\(type.identifier) has no value \(number); it takes \(allowed)")
        }
        return value
    }

    static func endText(_ instant: Instant) -> String { StoreArguments.format(instant, offsetSeconds: 0) }

    /// The fields of one line, each checked for its JSON type and size; absent and `null` are the same.
    struct Fields {
        let object: [JSONField]

        init(_ object: [JSONField]) { self.object = object }

        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }

        /// A string of at most `limit` UTF-8 bytes, or `nil` when absent or null.
        func string(_ key: String, in object: [JSONField]? = nil, limit: Int, path: String? = nil) throws(LineError)
            -> String?
        {
            guard let value = (object ?? self.object).present(key) else { return nil }
            guard let text = value.string else { throw fail("\"\(path ?? key)\" must be a string") }
            guard text.utf8.count <= limit else {
                throw fail("\"\(path ?? key)\" is longer than \(limit) bytes (\(text.utf8.count))")
            }
            return text
        }

        /// An identifier: a string of at most ``maximumNameBytes``.
        func name(_ key: String) throws(LineError) -> String? {
            try string(key, limit: maximumNameBytes)
        }

        /// `"device"`: a key (with `"device_name"`), or an object of the ``Device`` fields.
        func device() throws(LineError) -> Device? {
            guard let value = object.present("device") else { return nil }
            if value.string != nil {
                return Device(name: try name("device_name"), localIdentifier: try name("device"))
            }
            guard let fields = value.members else {
                throw fail("\"device\" must be a string (its key) or an object")
            }
            func text(_ key: String) throws(LineError) -> String? {
                try string(key, in: fields, limit: maximumNameBytes, path: "device.\(key)")
            }
            let known: Set = [
                "key", "name", "manufacturer", "model", "hardware_version", "firmware_version", "software_version",
                "serial_number", "local_identifier",
            ]
            if let unknown = fields.map(\.key).sorted().first(where: { !known.contains($0) }) {
                throw fail("\"device\" has an unknown field \(echo(unknown))")
            }
            _ = try text("key")
            return Device(
                name: try text("name"), manufacturer: try text("manufacturer"), model: try text("model"),
                hardwareVersion: try text("hardware_version"), firmwareVersion: try text("firmware_version"),
                softwareVersion: try text("software_version"), serialNumber: try text("serial_number"),
                localIdentifier: try text("local_identifier"))
        }

        /// `"metadata"`: an object of strings, numbers, booleans, `{"value", "unit"}` quantities and
        /// `{"date_time"}` dates. A key given twice counts once, with its last value.
        func metadata() throws(LineError) -> [String: MetadataValue] {
            guard let value = object.present("metadata") else { return [:] }
            guard let members = value.members else { throw fail("\"metadata\" must be an object") }
            var raw: [String: JSONValue] = [:]
            for member in members { raw[member.key] = member.value }
            guard raw.count <= maximumMetadataKeys else {
                throw fail("\"metadata\" has \(raw.count) keys; at most \(maximumMetadataKeys) are accepted")
            }
            var metadata: [String: MetadataValue] = [:]
            for (key, item) in raw.sorted(by: { $0.key < $1.key }) {
                guard key.utf8.count <= maximumNameBytes else {
                    throw fail("a metadata key is longer than \(maximumNameBytes) bytes")
                }
                switch item {
                case .string(let text):
                    guard text.utf8.count <= maximumMetadataStringBytes else {
                        throw fail(
                            "\"metadata.\(key)\" is longer than \(maximumMetadataStringBytes) bytes (\(text.utf8.count))"
                        )
                    }
                    metadata[key] = .string(text)
                case .bool(let flag):
                    metadata[key] = .bool(flag)
                case .integer(let number):
                    metadata[key] = .integer(number)
                case .double(let number):
                    metadata[key] = .number(number)
                case .object(let members):
                    if members.count == 2, let number = members.present("value")?.number,
                        let unit = try string(
                            "unit", in: members, limit: maximumNameBytes, path: "metadata.\(key).unit")
                    {
                        metadata[key] = .quantity(number, unit: unit)
                    } else if members.count == 1,
                        let text = try string("date_time", in: members, limit: 64, path: "metadata.\(key).date_time")
                    {
                        metadata[key] = .date(try time(text, field: "metadata.\(key).date_time").0)
                    } else {
                        throw Self.badMetadata(key, fail)
                    }
                case .null, .array:
                    throw Self.badMetadata(key, fail)
                }
            }
            return metadata
        }

        static func badMetadata(_ key: String, _ fail: (String) -> LineError) -> LineError {
            fail("metadata \(echo(key)) must be a string, number, boolean, {\"value\", \"unit\"} or {\"date_time\"}")
        }

        /// `"beats"` of a heartbeat series: `{"offset_ms", "rr_ms", "gap"}` objects (`gap` optional).
        func beats() throws(LineError) -> [Beat] {
            guard let list = object.present("beats")?.elements else {
                throw fail("a heartbeatSeries line needs \"beats\", a list")
            }
            guard list.count <= maximumBeats else {
                throw fail("\"beats\" has \(list.count) beats; at most \(maximumBeats) are accepted")
            }
            var beats: [Beat] = []
            beats.reserveCapacity(list.count)
            for (index, item) in list.enumerated() {
                guard let beat = item.members, let offset = beat.present("offset_ms")?.number,
                    let rr = beat.present("rr_ms")?.number
                else { throw fail("beat \(index + 1) must be {\"offset_ms\": number, \"rr_ms\": number}") }
                var gap = false
                if let flag = beat.present("gap") {
                    guard let value = flag.bool else { throw fail("beat \(index + 1): \"gap\" must be true or false") }
                    gap = value
                }
                beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: gap))
            }
            return beats
        }
    }

    /// An Open mHealth data point (as `wearhouse export --format ndjson` writes it) in the flat shape.
    static func flatten(openMHealth point: [JSONField]) throws(LineError) -> [JSONField] {
        func fail(_ message: String) -> LineError { LineError(line: 0, message: message) }
        guard let header = point.present("header")?.members, let body = point.present("body")?.members else {
            throw fail("\"header\" and \"body\" must be objects")
        }
        let extra = header.present("wearhouse")?.members ?? []
        let schema = header.present("schema_id")?.members?.present("name")?.string
        var flat: [JSONField] = []
        func set(_ key: String, _ value: JSONValue?) {
            if let value { flat.append(JSONField(key: key, value: value)) }
        }
        let known = schema.flatMap(OpenMHealthSchema.named)
        var type = extra.present("type") ?? known.map { .string($0.type) }
        // `id` as the header's schema has it; `uuid` as wearhouse wrote it before.
        set("uuid", header.present("id") ?? header.present("uuid"))
        set("source", header.present("acquisition_provenance")?.members?.present("source_name"))
        for key in ["source_version", "device", "subject", "metadata"] { set(key, extra.present(key)) }
        if let beats = body.present("beats") {
            set("beats", beats)
            if type == nil, schema == "heartbeat-series" { type = .string("heartbeatSeries") }
        } else if let category = body.present("category")?.members {
            set("value", category.present("value"))
        } else if known?.type == "sleepAnalysis" {
            set("value", .integer(1))  // a sleep duration from elsewhere: asleep, stage unknown
        } else if let exact = extra.present("value") {
            set("value", exact)  // wearhouse's own, in the canonical unit
        } else {
            guard
                let quantity = body.first(where: {
                    $0.key != "effective_time_frame" && $0.value.members?.present("value") != nil
                })?.value.members
            else { throw fail("body has no {\"value\", \"unit\"} measure") }
            if let known, known.scale != 1, let value = quantity.present("value")?.number {
                set("value", .double(value / known.scale))
            } else {
                set("value", quantity.present("value"))
                if let unit = quantity.present("unit")?.string {
                    set("unit", .string(OpenMHealthSchema.storeUnit(unit)))
                }
            }
        }
        set("type", type)
        let frame = body.present("effective_time_frame")?.members ?? []
        if let instant = frame.present("date_time") {
            set("start", instant)
        } else if let interval = frame.present("time_interval")?.members {
            set("start", interval.present("start_date_time"))
            set("end", interval.present("end_date_time"))
        } else {
            throw fail("body.effective_time_frame needs date_time or time_interval")
        }
        return flat
    }

    /// An RFC 3339 instant and its offset in seconds (``RFC3339Time``), or an error naming `field`.
    static func time(_ text: String, field: String) throws(LineError) -> (Instant, Int32) {
        switch RFC3339Time.parse(text) {
        case .success(let instant, let offset): return (instant, offset)
        case .failure(let reason):
            throw LineError(line: 0, message: "\"\(field)\" \(echo(text)) is not an RFC 3339 time: \(reason)")
        }
    }
}
