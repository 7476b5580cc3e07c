import Foundation

/// One sort key of a sample query (HealthKit's `NSSortDescriptor` on `startDate` or `endDate`).
public struct SampleSortDescriptor: Hashable, Sendable, CustomStringConvertible {
    public enum Key: String, Hashable, Sendable, CaseIterable {
        case start
        case end
    }

    public var key: Key
    public var ascending: Bool

    public init(_ key: Key, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// `start`, `-start`, `end` or `-end` (descending with a leading minus).
    public var description: String { (ascending ? "" : "-") + key.rawValue }

    /// The most keys a query sorts by: each key once.
    public static let maximumCount = Key.allCases.count

    /// Parses `start,-end` (also `startDate`, `endDate`): keys in order, a leading `-` for descending, each key
    /// at most once.
    public static func parse(_ text: String) throws(SortError) -> [SampleSortDescriptor] {
        try parse(text.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
    }

    /// Parses each element as in ``parse(_:)-(String)``.
    public static func parse(_ items: [String]) throws(SortError) -> [SampleSortDescriptor] {
        guard !items.isEmpty, items.count <= maximumCount else {
            throw SortError(message: "a sort order lists 1 to \(maximumCount) keys (start, end), not \(items.count)")
        }
        var result: [SampleSortDescriptor] = []
        for item in items {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            let ascending = !trimmed.hasPrefix("-")
            let name = ascending ? trimmed : String(trimmed.dropFirst())
            let key: Key
            switch name {
            case "start", "startDate": key = .start
            case "end", "endDate": key = .end
            default:
                throw SortError(
                    message:
                        "'\(item.prefix(40))' is not a sort key: use start or end, with a leading - for descending")
            }
            guard !result.contains(where: { $0.key == key }) else {
                throw SortError(message: "the sort order names \(key.rawValue) twice")
            }
            result.append(SampleSortDescriptor(key, ascending: ascending))
        }
        return result
    }
}

/// A sort order that cannot be used, with the reason.
public struct SortError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The complete order of a sample query: the query's keys, then the key it leaves out in the direction of its
/// last key, then the sample id (its bytes) in that direction too, so that every order is total and a cursor
/// (the last sample's start, end and id) continues it exactly. Both engines sort by this.
public struct SampleOrder: Hashable, Sendable {
    /// Start and end, each once, in the order they are compared.
    public let keys: [SampleSortDescriptor]
    /// The direction of the final tie-break on the id.
    public let idAscending: Bool

    public init(_ descriptors: [SampleSortDescriptor]) {
        var keys: [SampleSortDescriptor] = []
        for descriptor in descriptors where !keys.contains(where: { $0.key == descriptor.key }) {
            keys.append(descriptor)
        }
        if keys.isEmpty { keys = [SampleSortDescriptor(.start)] }
        let last = keys[keys.count - 1].ascending
        for key in SampleSortDescriptor.Key.allCases where !keys.contains(where: { $0.key == key }) {
            keys.append(SampleSortDescriptor(key, ascending: last))
        }
        self.keys = keys
        self.idAscending = last
    }

    /// Start then end then id, all ascending (or all descending).
    public static func chronological(ascending: Bool) -> SampleOrder {
        SampleOrder([SampleSortDescriptor(.start, ascending: ascending)])
    }

    /// The order's text, as ``SampleSortDescriptor/parse(_:)-(String)`` reads it: `start,-end`.
    public var description: String { keys.map(\.description).joined(separator: ",") }

    /// Whether the sample `(start, end, id)` comes before `(start, end, id)` of another.
    public func precedes(
        _ lhs: (start: Instant, end: Instant, id: [UInt8]), _ rhs: (start: Instant, end: Instant, id: [UInt8])
    ) -> Bool {
        for descriptor in keys {
            let left = descriptor.key == .start ? lhs.start : lhs.end
            let right = descriptor.key == .start ? rhs.start : rhs.end
            if left != right { return descriptor.ascending ? left < right : left > right }
        }
        return idAscending ? lhs.id.lexicographicallyPrecedes(rhs.id) : rhs.id.lexicographicallyPrecedes(lhs.id)
    }

    /// Whether the sample `(start, end, id)` comes after the cursor.
    public func follows(_ sample: (start: Instant, end: Instant, id: [UInt8]), cursor: SampleCursor) -> Bool {
        precedes((cursor.start, cursor.end, UUID(uuidString: cursor.id)?.bytes ?? []), sample)
    }

    /// The value of the first key of `sample`: what bounds the range still to read after it.
    public func leadingValue(start: Instant, end: Instant) -> Instant {
        keys[0].key == .start ? start : end
    }
}

extension SampleQuery {
    /// The query's complete order (``SampleOrder``).
    public var order: SampleOrder { SampleOrder(sort) }
}
