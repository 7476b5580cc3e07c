internal import GATT
internal import Support

/// Turns ``TraceRecord``s into lines and lines back into records (the format is in `docs/trace-format.md`).
public enum TraceLineCodec {
    /// What a line that parsed as JSON turned out to be.
    public enum Decoded: Hashable, Sendable {
        case record(TraceRecord)
        /// A line of a kind this version does not know (a later version's addition): skipped, not an error.
        case unknownKind(String)
    }

    // MARK: Encoding

    /// The line for `record`, newline included.
    public static func encode(_ record: TraceRecord) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        switch record {
        case .header(let header):
            json.member("wearhouse-trace", header.version)
            encodeHeaderFields(header, into: &json)
        case .session(let header):
            json.member("kind", "session")
            json.member("version", header.version)
            encodeHeaderFields(header, into: &json)
        case .sensor(let sensor):
            json.member("kind", "sensor")
            json.member("sensor", sensor.address)
            json.member("adapter", sensor.adapter)
            json.member("name", sensor.name)
            json.member("label", sensor.label)
            json.member("manufacturer", sensor.manufacturer)
            json.member("model", sensor.model)
            json.member("serial", sensor.serialNumber)
            json.member("hardware", sensor.hardwareRevision)
            json.member("firmware", sensor.firmwareRevision)
            json.member("software", sensor.softwareRevision)
            json.member("body-location", sensor.bodySensorLocation)
            json.member("rsc-location", sensor.sensorLocation)
            if sensor.reportsWalkingOrRunning { json.member("walking-running", true) }
            json.member("subject", sensor.subject)
            json.member("source", sensor.sourceIdentifier)
            json.member("source-version", sensor.sourceVersion)
            json.member("time-zone", sensor.timeZone)
            json.member("temperature-type", sensor.temperatureType)
            json.member("clock-offset-ms", sensor.clockOffsetMilliseconds)
            json.member("clock-set-ms", sensor.clockSetMilliseconds)
            json.member("characteristics", sensor.characteristics.map(\.shortDescription))
            if let at = sensor.at { encode(at, into: &json) }
        case .connection(let connection):
            json.member("kind", "connection")
            json.member("sensor", connection.address)
            json.member("connected", connection.connected)
            encode(connection.at, into: &json)
        case .value(let value):
            json.member("kind", value.kind.rawValue)
            json.member("sensor", value.address)
            json.member("uuid", value.characteristic.shortDescription)
            json.member("value", hex: value.bytes)
            encode(value.at, into: &json)
        }
        json.endObject()
        json.endLine()
        return json.bytes
    }

    private static func encodeHeaderFields(_ header: TraceHeader, into json: inout JSONWriter) {
        json.member("created-us", header.createdWallMicroseconds)
        json.member("recorder", header.recorder)
        json.member("origin", header.origin)
        json.member("series-window-ms", header.seriesWindowMilliseconds)
        json.member("gap-threshold-ms", header.gapThresholdMilliseconds)
    }

    private static func encode(_ at: Timestamp, into json: inout JSONWriter) {
        json.member("mono-ns", nanoseconds(at.monotonic))
        json.member("wall-us", at.wallMicroseconds)
    }

    /// Whole nanoseconds of `duration` (saturating).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (seconds < 0 ? .min : .max) : sum
    }

    // MARK: Decoding

    /// Decodes one line (without its newline).
    ///
    /// - Throws: ``TraceSyntaxError`` naming the byte offset when the line is not JSON, or a field is missing or
    ///   of the wrong type.
    public static func decode(_ line: UnsafeBufferPointer<UInt8>) throws(TraceSyntaxError) -> Decoded {
        let fields: [JSONField]
        do throws(JSONSyntaxError) {
            fields = try JSONReader.object(line, limits: .traceLine)
        } catch {
            throw TraceSyntaxError(error)
        }
        return try decode(fields)
    }

    /// Decodes one line (without its newline).
    public static func decode(_ line: [UInt8]) throws(TraceSyntaxError) -> Decoded {
        try line.withUnsafeBufferPointer { (buffer) throws(TraceSyntaxError) in try decode(buffer) }
    }

    static func decode(_ fields: [JSONField]) throws(TraceSyntaxError) -> Decoded {
        let object = Fields(fields)
        if object.has("wearhouse-trace") {
            return .record(.header(try header(object, versionKey: "wearhouse-trace")))
        }
        let kind = try object.requiredString("kind")
        switch kind {
        case "session":
            return .record(.session(try header(object, versionKey: "version")))
        case "sensor":
            return .record(.sensor(try sensor(object)))
        case "connection":
            return .record(
                .connection(
                    TraceConnection(
                        address: try object.address(), connected: try object.requiredBool("connected"),
                        at: try object.timestamp())))
        default:
            guard let valueKind = TraceValue.Kind(rawValue: kind) else { return .unknownKind(kind) }
            let text = try object.requiredString("uuid")
            guard let uuid = BluetoothUUID(text) else { throw object.invalid("'uuid' is not a Bluetooth UUID") }
            let hex = try object.requiredString("value")
            let bytes: [UInt8]
            do throws(Hex.ParseError) {
                bytes = try Hex.bytes(hex)
            } catch {
                throw object.invalid("'value' is not hex: \(error)")
            }
            return .record(
                .value(
                    TraceValue(
                        kind: valueKind, address: try object.address(), characteristic: uuid, bytes: bytes,
                        at: try object.timestamp())))
        }
    }

    private static func header(_ object: Fields, versionKey: String) throws(TraceSyntaxError) -> TraceHeader {
        let version = try object.requiredInteger(versionKey)
        guard version >= 1 else { throw object.invalid("version \(version) is not a trace version") }
        guard version <= Int64(TraceHeader.currentVersion) else {
            throw object.invalid(
                "trace version \(version) is newer than this wearhouse reads (\(TraceHeader.currentVersion))")
        }
        return TraceHeader(
            version: Int(version), createdWallMicroseconds: try object.integer("created-us"),
            recorder: try object.string("recorder"), origin: try object.string("origin"),
            seriesWindowMilliseconds: try object.integer("series-window-ms"),
            gapThresholdMilliseconds: try object.integer("gap-threshold-ms"))
    }

    private static func sensor(_ object: Fields) throws(TraceSyntaxError) -> TraceSensor {
        var characteristics: [BluetoothUUID] = []
        for text in try object.strings("characteristics") {
            guard let uuid = BluetoothUUID(text) else {
                throw object.invalid("'characteristics' holds \(ErrorEcho.echo(text)), not a Bluetooth UUID")
            }
            characteristics.append(uuid)
        }
        let at: Timestamp? = object.has("mono-ns") || object.has("wall-us") ? try object.timestamp() : nil
        let limit = TraceSensor.maximumClockOffsetMilliseconds
        let clockOffset = try object.integer("clock-offset-ms")
        if let clockOffset, !(-limit...limit).contains(clockOffset) {
            throw object.invalid("'clock-offset-ms' must be within ±\(limit) (a hundred years)")
        }
        let clockSet = try object.integer("clock-set-ms")
        let wallMilliseconds = Self.wallMicroseconds.lowerBound / 1000...Self.wallMicroseconds.upperBound / 1000
        if let clockSet, !wallMilliseconds.contains(clockSet) {
            throw object.invalid("'clock-set-ms' must be a time in the years 1-9999")
        }
        return TraceSensor(
            address: try object.address(), adapter: try object.string("adapter"), name: try object.string("name"),
            label: try object.string("label"), manufacturer: try object.string("manufacturer"),
            model: try object.string("model"), serialNumber: try object.string("serial"),
            hardwareRevision: try object.string("hardware"), firmwareRevision: try object.string("firmware"),
            softwareRevision: try object.string("software"),
            bodySensorLocation: try object.byte("body-location"), sensorLocation: try object.byte("rsc-location"),
            reportsWalkingOrRunning: try object.bool("walking-running") ?? false,
            subject: try object.string("subject"), sourceIdentifier: try object.string("source"),
            sourceVersion: try object.string("source-version"), timeZone: try object.string("time-zone"),
            temperatureType: try object.byte("temperature-type"), clockOffsetMilliseconds: clockOffset,
            clockSetMilliseconds: clockSet, characteristics: characteristics, at: at)
    }

    /// The `wall-us` a trace may hold: the instants a store accepts (`Instant.supportedMilliseconds` in
    /// Sources/Health/Instant.swift), 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z, in microseconds. A line
    /// outside is invalid, so that no time arithmetic downstream can overflow.
    public static let wallMicroseconds: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    /// Whether `text` is a Bluetooth device address, `AA:BB:CC:DD:EE:FF` (either case).
    public static func isAddress(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else { return false }
        for (position, byte) in utf8.enumerated() {
            if position % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return false }
            } else {
                guard byte.isHexDigitASCII else { return false }
            }
        }
        return true
    }
}

extension UInt8 {
    fileprivate var isHexDigitASCII: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}

/// Typed access to a line's fields; errors name the field.
private struct Fields {
    let fields: [JSONField]

    init(_ fields: [JSONField]) {
        self.fields = fields
    }

    func value(_ key: String) -> JSONValue? {
        // Later duplicates win, as in most JSON readers.
        fields.last { $0.key == key }?.value
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    func invalid(_ reason: String) -> TraceSyntaxError { TraceSyntaxError(offset: 0, reason: reason) }

    func string(_ key: String) throws(TraceSyntaxError) -> String? {
        switch value(key) {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw invalid("'\(key)' must be a string")
        }
    }

    func requiredString(_ key: String) throws(TraceSyntaxError) -> String {
        guard let text = try string(key) else { throw invalid("missing '\(key)'") }
        return text
    }

    func integer(_ key: String) throws(TraceSyntaxError) -> Int64? {
        switch value(key) {
        case nil, .null?: return nil
        case .integer(let number)?: return number
        default: throw invalid("'\(key)' must be an integer")
        }
    }

    func requiredInteger(_ key: String) throws(TraceSyntaxError) -> Int64 {
        guard let number = try integer(key) else { throw invalid("missing '\(key)'") }
        return number
    }

    func byte(_ key: String) throws(TraceSyntaxError) -> UInt8? {
        guard let number = try integer(key) else { return nil }
        guard let byte = UInt8(exactly: number) else { throw invalid("'\(key)' must be 0-255") }
        return byte
    }

    func bool(_ key: String) throws(TraceSyntaxError) -> Bool? {
        switch value(key) {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw invalid("'\(key)' must be true or false")
        }
    }

    func requiredBool(_ key: String) throws(TraceSyntaxError) -> Bool {
        guard let flag = try bool(key) else { throw invalid("missing '\(key)'") }
        return flag
    }

    func strings(_ key: String) throws(TraceSyntaxError) -> [String] {
        switch value(key) {
        case nil, .null?: return []
        case .array(let elements)?:
            var out: [String] = []
            for element in elements {
                guard case .string(let text) = element else { throw invalid("'\(key)' must hold strings") }
                out.append(text)
            }
            return out
        default: throw invalid("'\(key)' must be an array of strings")
        }
    }

    func address() throws(TraceSyntaxError) -> String {
        let text = try requiredString("sensor")
        guard TraceLineCodec.isAddress(text) else { throw invalid("'sensor' is not an address like AA:BB:CC:DD:EE:FF") }
        return text.uppercased()
    }

    func timestamp() throws(TraceSyntaxError) -> Timestamp {
        let mono = try requiredInteger("mono-ns")
        let wall = try requiredInteger("wall-us")
        guard TraceLineCodec.wallMicroseconds.contains(wall) else {
            throw invalid(
                "'wall-us' \(wall) is outside the times a store holds (0001-01-01 to 9999-12-31 UTC: "
                    + "\(TraceLineCodec.wallMicroseconds.lowerBound)...\(TraceLineCodec.wallMicroseconds.upperBound))")
        }
        return Timestamp(monotonic: .nanoseconds(mono), wallMicroseconds: wall)
    }
}
