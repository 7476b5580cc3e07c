import DBus
import Foundation
import Health

/// The `a{sv}` options of a call, read with typed getters that name the option when its type is wrong, and that
/// refuse options the method does not take (a misspelt option is an error, not a silently ignored filter).
struct BusOptions {
    private let entries: [String: DBusValue]
    private let method: String

    init(_ value: DBusValue, method: String, allowed: [String]) throws(HealthBusError) {
        guard let entries = value.stringKeyedValue else { throw .invalidArgument("\(method): options are a{sv}") }
        for key in entries.keys where !allowed.contains(key) {
            throw .invalidArgument(
                "\(method) has no option '\(key)'; its options are \(allowed.joined(separator: ", "))")
        }
        self.entries = entries
        self.method = method
    }

    func integer(_ key: String) throws(HealthBusError) -> Int64? {
        guard let value = entries[key] else { return nil }
        guard let number = SampleWire.integer(value) else {
            throw .invalidArgument("\(method): option '\(key)' is an integer (x)")
        }
        return number
    }

    func instant(_ key: String) throws(HealthBusError) -> Instant? {
        try integer(key).map { Instant(milliseconds: $0) }
    }

    func bool(_ key: String) throws(HealthBusError) -> Bool? {
        guard let value = entries[key] else { return nil }
        guard let flag = value.boolValue else { throw .invalidArgument("\(method): option '\(key)' is a boolean (b)") }
        return flag
    }

    func string(_ key: String) throws(HealthBusError) -> String? {
        guard let value = entries[key] else { return nil }
        guard let text = value.stringValue else { throw .invalidArgument("\(method): option '\(key)' is a string (s)") }
        try checkLength(text, key)
        return text
    }

    /// A list of strings, at most ``HealthBusAPI/maximumFilterValues`` of at most
    /// ``HealthBusAPI/maximumStringLength`` bytes each (checked before anything is done with them).
    func strings(_ key: String) throws(HealthBusError) -> [String]? {
        guard let value = entries[key] else { return nil }
        guard let list = value.stringArrayValue else {
            throw .invalidArgument("\(method): option '\(key)' is a list of strings (as)")
        }
        guard list.count <= HealthBusAPI.maximumFilterValues else {
            throw .limitExceeded(
                "\(method): option '\(key)' lists \(list.count) values; at most \(HealthBusAPI.maximumFilterValues)")
        }
        for text in list { try checkLength(text, key) }
        return list
    }

    private func checkLength(_ text: String, _ key: String) throws(HealthBusError) {
        guard text.utf8.count <= HealthBusAPI.maximumStringLength else {
            throw .limitExceeded(
                "\(method): a value of option '\(key)' is \(text.utf8.count) bytes long; at most "
                    + "\(HealthBusAPI.maximumStringLength)")
        }
    }

    func dictionary(_ key: String) -> DBusValue? { entries[key] }
}

/// Where a page of a sample query ended, as an opaque string: `<type>/<order>/<start ms>/<end ms>/<uuid>`, the order
/// `a` or `d` when chronological (by start, then end, ascending or descending), else as ``SampleOrder/description``
/// writes it (`start,-end`). The type and the order are checked when it comes back, so a cursor cannot continue
/// another query.
enum CursorWire {
    static func name(_ order: SampleOrder) -> String {
        if order == .chronological(ascending: true) { return "a" }
        if order == .chronological(ascending: false) { return "d" }
        return order.description
    }

    static func encode(_ cursor: SampleCursor?, type: HealthType, order: SampleOrder) -> String {
        guard let cursor else { return "" }
        return [
            type.identifier, name(order), String(cursor.start.milliseconds), String(cursor.end.milliseconds),
            cursor.id.lowercased(),
        ].joined(separator: "/")
    }

    static func decode(_ text: String, type: HealthType, order: SampleOrder) throws(HealthBusError) -> SampleCursor? {
        guard !text.isEmpty else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, let start = Int64(parts[2]), let end = Int64(parts[3]),
            UUID(uuidString: parts[4]) != nil
        else { throw .invalidArgument("the cursor '\(HealthBusError.clipped(text))' is not one this service returned") }
        guard parts[0] == type.identifier, parts[1] == name(order) else {
            throw .invalidArgument(
                "the cursor continues a query of \(HealthBusError.clipped(parts[0])) sorted by "
                    + "\(parts[1] == "a" ? "start,end" : parts[1] == "d" ? "-start,-end" : HealthBusError.clipped(parts[1])); pass the same type and order ('sort' or 'ascending') as the "
                    + "query that returned it")
        }
        return SampleCursor(start: Instant(milliseconds: start), end: Instant(milliseconds: end), id: parts[4])
    }
}

/// Statistics results as `a{sv}`: `start`, `end` (x, ms), `startOffset` (i, s), `unit` (s); for cumulative types
/// `sum` (d) and `sources` (as); for discrete types `count` (x), `sum`, `average`, `minimum`, `maximum`,
/// `mostRecent` (d), `mostRecentEnd` (x), `timeWeightedAverage` (d); with `separateBySource`, `source` (s) and
/// `device` (s); for category types `count` (x, samples) and `categories` (aa{sv}: per value that occurs, `value` (x),
/// `name` (s), `milliseconds` (x, time in it within the bucket), `count` (x)), and an empty `unit`. A statistic
/// without a value (an empty bucket) is left out.
enum StatisticsWire {
    static func encode(_ result: StatisticsResult, type: HealthType, unit: HealthUnit?) -> DBusValue {
        let canonical = try? HealthUnit(type.canonicalUnit)
        func converted(_ value: Double) -> Double {
            guard let unit, let canonical, let value = try? canonical.convert(value, to: unit) else { return value }
            return value
        }
        var fields: [(String, DBusValue)] = [
            ("start", .int64(result.bucket.start.milliseconds)), ("end", .int64(result.bucket.end.milliseconds)),
            ("startOffset", .int32(result.bucket.startOffsetSeconds)),
            ("unit", .string(unit?.description ?? type.canonicalUnit)),
        ]
        if let provenance = result.provenance {
            fields.append(("source", .string(provenance.source)))
            if let device = provenance.device { fields.append(("device", .string(device))) }
        }
        if type.kind == .category {
            let values = result.categories.map { entry in
                DBusValue.vardict(ordered: [
                    ("value", .int64(Int64(entry.value))), ("name", .string(type.name(of: entry.value) ?? "")),
                    ("milliseconds", .int64(entry.milliseconds)), ("count", .int64(Int64(entry.count))),
                ])
            }
            fields.append(("count", .int64(Int64(result.categories.reduce(0) { $0 + $1.count }))))
            fields.append(("categories", .array(.dictionary(key: .string, value: .variant), values)))
        } else if let discrete = result.discrete {
            fields.append(("count", .int64(Int64(discrete.count))))
            let optional: [(String, Double?)] = [
                ("sum", discrete.sum), ("average", discrete.average), ("minimum", discrete.minimum),
                ("maximum", discrete.maximum), ("mostRecent", discrete.mostRecent),
                ("timeWeightedAverage", discrete.timeWeightedAverage),
            ]
            for (key, value) in optional { if let value { fields.append((key, .double(converted(value)))) } }
            if let end = discrete.mostRecentEnd { fields.append(("mostRecentEnd", .int64(end.milliseconds))) }
        } else {
            if let sum = result.sum { fields.append(("sum", .double(converted(sum)))) }
            fields.append(("sources", .strings(result.sources.map(\.description))))
        }
        return .vardict(ordered: fields)
    }
}
