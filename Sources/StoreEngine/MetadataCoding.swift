public import Health
internal import Support

/// Metadata as stored: a JSON object whose values are tagged by type, so a number stays a number and a date a
/// date: `{"heartRateSensorLocation": {"number": 1}, "timeZone": {"string": "Europe/Berlin"}}`.
/// Shared by the engines, so that both store the same text. Written and read by Support's
/// ``JSONWriter`` and ``JSONReader`` (no `JSONSerialization`, whose boxing into `Any` cost tens of microseconds a
/// dictionary, paid for every stream of a batch).
public enum MetadataCoding {
    /// What stored metadata text may be: far more than any sample's metadata, and never deeper than the tagged
    /// values (a stored text nested deeper was not written by a store and reads as no metadata).
    static let limits = JSONLimits(maximumDepth: 8, maximumLength: 1 << 20)

    /// The stored text: keys sorted, each value an object tagged by its type. `nil` for no metadata, or when a
    /// number is not finite (JSON has no such numbers).
    public static func encode(_ metadata: [String: MetadataValue]) -> String? {
        guard !metadata.isEmpty else { return nil }
        var json = JSONWriter(capacity: 32 * metadata.count)
        json.beginObject()
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            json.key(key)
            json.beginObject()
            switch value {
            case .string(let text):
                json.key("string")
                json.string(text)
            case .number(let number):
                guard number.isFinite else { return nil }
                json.key("number")
                write(number, to: &json)
            case .integer(let number):
                json.key("integer")
                json.integer(number)
            case .bool(let flag):
                json.key("bool")
                json.bool(flag)
            case .date(let instant):
                json.key("date")
                json.integer(instant.milliseconds)
            case .quantity(let number, let unit):
                guard number.isFinite else { return nil }
                json.key("quantity")
                write(number, to: &json)
                json.key("unit")
                json.string(unit)
            }
            json.endObject()
        }
        json.endObject()
        return json.text
    }

    /// A number as JSON: whole numbers without a fraction (as `JSONSerialization` wrote them, so that stored text
    /// stays as it was), others (and -0) in the shortest form that reads back to the same double.
    private static func write(_ number: Double, to json: inout JSONWriter) {
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992, !(number == 0 && number.sign == .minus) {
            json.integer(Int64(number))
        } else {
            json.double(number)
        }
    }

    /// The metadata of stored text: every tagged value of the shape ``encode(_:)`` writes (and that
    /// `JSONSerialization` wrote before), read exactly. Members that are not tagged objects, and tags of a later
    /// version, are skipped; text that is not a JSON object reads as no metadata.
    public static func decode(_ text: String?) -> [String: MetadataValue] {
        guard let text, case .object(let members)? = try? JSONReader.value(text, limits: limits) else { return [:] }
        var metadata: [String: MetadataValue] = [:]
        for member in members {
            let tagged = member.value
            guard case .object = tagged else { continue }
            // The tags in the order the reader over JSONSerialization checked them; a key given twice keeps its
            // last value that reads.
            if let text = tagged["string"]?.string {
                metadata[member.key] = .string(text)
            } else if let flag = tagged["bool"]?.bool {
                metadata[member.key] = .bool(flag)
            } else if let date = tagged["date"] {
                switch date {
                case .integer(let milliseconds):
                    metadata[member.key] = .date(Instant(milliseconds: milliseconds))
                case .double(let number):
                    // A date written with a fraction or an exponent: whole milliseconds, when they fit.
                    guard let milliseconds = Int64(exactly: number.rounded(.towardZero)) else { continue }
                    metadata[member.key] = .date(Instant(milliseconds: milliseconds))
                default:
                    continue
                }
            } else if let number = tagged["quantity"]?.number, let unit = tagged["unit"]?.string {
                metadata[member.key] = .quantity(number, unit: unit)
            } else if case .integer(let number)? = tagged["integer"] {
                metadata[member.key] = .integer(number)
            } else if let number = tagged["number"]?.number {
                metadata[member.key] = .number(number)
            }
        }
        return metadata
    }
}
