import Foundation

/// Metadata as stored: a JSON object whose values are tagged by type, so a number stays a number and a date a
/// date: `{"heartRateSensorLocation": {"number": 1}, "timeZone": {"string": "Europe/Berlin"}}`.
/// Shared by the engines (package access), so that both store the same text.
package enum MetadataCoding {
    package static func encode(_ metadata: [String: MetadataValue]) -> String? {
        guard !metadata.isEmpty else { return nil }
        var object: [String: Any] = [:]
        for (key, value) in metadata {
            switch value {
            case .string(let text): object[key] = ["string": text]
            case .number(let number): object[key] = ["number": number]
            case .bool(let flag): object[key] = ["bool": flag]
            case .date(let instant): object[key] = ["date": instant.milliseconds]
            case .quantity(let number, let unit): object[key] = ["quantity": number, "unit": unit]
            }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    package static func decode(_ text: String?) -> [String: MetadataValue] {
        guard let text, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return [:]
        }
        var metadata: [String: MetadataValue] = [:]
        for (key, raw) in object {
            guard let tagged = raw as? [String: Any] else { continue }
            if let text = tagged["string"] as? String {
                metadata[key] = .string(text)
            } else if let flag = tagged["bool"] as? Bool {  // only booleans are written under "bool"
                metadata[key] = .bool(flag)
            } else if let milliseconds = tagged["date"] as? NSNumber {
                metadata[key] = .date(Instant(milliseconds: milliseconds.int64Value))
            } else if let number = tagged["quantity"] as? NSNumber, let unit = tagged["unit"] as? String {
                metadata[key] = .quantity(number.doubleValue, unit: unit)
            } else if let number = tagged["number"] as? NSNumber {
                metadata[key] = .number(number.doubleValue)
            }
        }
        return metadata
    }
}
