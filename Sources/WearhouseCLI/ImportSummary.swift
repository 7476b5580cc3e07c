import Health
import StoreEngine

/// What `import-samples` prints after an Apple Health export or a Gadgetbridge database: the store's outcomes, then
/// per type how many were read, how many are new in the store and how many it held already (its count of the
/// type before and after the import), how many were converted from another unit, then what was not imported
/// and why.
struct ImportSummary {
    var outcomes: [WriteOutcome: Int] = [:]
    /// What went to the store, by type identifier.
    var read: [String: Int] = [:]
    /// Values converted from the unit the file gave to the type's, by type identifier.
    var converted: [String: Int] = [:]
    /// The store's samples of each type read, before and after the import.
    var before: [String: Int] = [:]
    var after: [String: Int] = [:]
    /// What of each type was not imported: how many and why (with where the first is), by type identifier.
    var skipped: [String: (count: Int, why: String)] = [:]
    /// Lines between the types and what was not imported (routes, devices, ...).
    var notes: [String] = []
    /// What was not imported: what, how many, and why (with where the first is).
    var notImported: [(what: String, count: Int, why: String)] = []

    /// How many samples of each of `types` the store holds (all sources), for the ones it counts by source
    /// (quantity and category types, heartbeat series); the rest are left out.
    static func storedCounts(_ store: any HealthStoreEngine, of types: some Sequence<String>) async -> [String: Int] {
        var counts: [String: Int] = [:]
        for identifier in types {
            guard let type = HealthTypeCatalog.type(identifier),
                type.isSampleType || type == .heartbeatSeries,
                let sources = try? await store.sources(of: type, as: .owner)
            else { continue }
            counts[identifier] = sources.reduce(0) { $0 + $1.count }
        }
        return counts
    }

    var text: String {
        let summary = [WriteOutcome.inserted, .duplicate, .conflict, .replaced, .stale].map {
            "\(outcomes[$0] ?? 0) \($0.rawValue)"
        }
        var lines = ["\(outcomes.values.reduce(0, +)) samples: \(summary.joined(separator: ", "))"]
        lines.append(read.isEmpty && skipped.isEmpty ? "read: nothing" : "by type:")
        for type in Set(read.keys).union(skipped.keys).sorted() {
            let count = read[type] ?? 0
            var parts = ["\(count) read"]
            if let before = before[type], let after = after[type] {
                let new = max(after - before, 0)
                parts.append("\(new) new")
                parts.append("\(max(count - new, 0)) already stored")
            }
            if let converted = converted[type], converted > 0 {
                parts.append("\(converted) converted from another unit")
            }
            if let skipped = skipped[type] { parts.append("\(skipped.count) skipped (\(skipped.why))") }
            lines.append("  \(type): " + parts.joined(separator: ", "))
        }
        lines += notes
        if !notImported.isEmpty {
            lines.append("not imported:")
            for item in notImported { lines.append("  \(item.what) \(item.count) (\(item.why))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
