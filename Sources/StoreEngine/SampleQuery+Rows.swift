public import Foundation
public import Health

/// What both engines do with the rows their SQL returns: the metadata predicates SQL does not
/// check, and the cursor that continues a page.
extension SampleQuery {
    /// The range and the sample ids the query's workout predicate narrows it to, given `members` (the engine's
    /// lookup of the workout's samples of the type and the interval they span, `nil` when it has none): the query's
    /// own range and no ids without a predicate; `nil` when no sample can match.
    public func workoutScope(
        _ members: (UUID) throws -> (ids: Set<UUID>, from: Instant, to: Instant)?
    ) rethrows -> (from: Instant?, to: Instant?, associated: Set<UUID>?)? {
        guard let workout else { return (from, to, nil) }
        guard let found = try members(workout) else { return nil }
        return (max(from ?? found.from, found.from), min(to ?? found.to, found.to), found.ids)
    }

    /// Whether `metadata` satisfies every metadata predicate of the query.
    public func matchesMetadata(_ metadata: [String: MetadataValue]) -> Bool {
        self.metadata.allSatisfy { predicate in
            switch predicate {
            case .exists(let key): metadata[key] != nil
            case .equals(let key, let value): metadata[key].map { Self.same($0, value) } ?? false
            }
        }
    }

    /// Equal values; an integer equals the number of the same value (`5` and `5.0`).
    static func same(_ lhs: MetadataValue, _ rhs: MetadataValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let whole), .number(let number)), (.number(let number), .integer(let whole)):
            Double(exactly: whole) == number
        default:
            lhs == rhs
        }
    }
}

extension SampleCursor {
    /// The cursor after a page that filled `wanted` (the query's limit) with `matched` results ending at `last`,
    /// or `nil` when the page was the last (unlimited queries have no next page).
    public static func following(
        matched: Int, wanted: Int, last: (start: Instant, end: Instant, id: UUID)?
    ) -> SampleCursor? {
        guard matched == wanted, wanted != Int.max, let last else { return nil }
        return SampleCursor(start: last.start, end: last.end, id: last.id.uuidString)
    }
}

/// A column of the sort order, for the SQL both engines build.
public enum SampleOrderField: Sendable {
    case start
    case end
    case id
}

extension SampleOrder {
    /// `ORDER BY` terms over the given columns: `s.start_ms DESC, s.end_ms DESC, s.uuid DESC`. Without `id`, the
    /// id tie-break is left out.
    public func orderBy(start: String, end: String, id: String?) -> String {
        var terms = keys.map { ($0.key == .start ? start : end) + ($0.ascending ? " ASC" : " DESC") }
        if let id { terms.append(id + (idAscending ? " ASC" : " DESC")) }
        return terms.joined(separator: ", ")
    }

    /// A condition that holds for rows after the cursor in this order, with `?` placeholders for the fields
    /// listed, in order: `(k1 > ?) OR (k1 = ? AND k2 < ?) OR ...`, led by `k1 >= ?` so that an index on the first
    /// key reads from the cursor on. Without `id`, rows tied with the cursor on start and end match too (the caller
    /// then compares ids itself).
    public func after(
        start: String, end: String, id: String?, idPlaceholder: String = "?"
    ) -> (sql: String, fields: [SampleOrderField]) {
        var columns: [(column: String, field: SampleOrderField, ascending: Bool, placeholder: String)] = keys.map {
            ($0.key == .start ? start : end, $0.key == .start ? .start : .end, $0.ascending, "?")
        }
        if let id { columns.append((id, .id, idAscending, idPlaceholder)) }
        let lead = columns[0]
        var fields: [SampleOrderField] = [lead.field]
        var alternatives: [String] = []
        for index in columns.indices {
            var terms: [String] = []
            for tied in columns[..<index] {
                terms.append("\(tied.column) = \(tied.placeholder)")
                fields.append(tied.field)
            }
            let current = columns[index]
            let inclusive = id == nil && index == columns.count - 1
            terms.append(
                "\(current.column) \(current.ascending ? ">" : "<")\(inclusive ? "=" : "") \(current.placeholder)")
            fields.append(current.field)
            alternatives.append("(" + terms.joined(separator: " AND ") + ")")
        }
        let sql =
            "\(lead.column) \(lead.ascending ? ">=" : "<=") \(lead.placeholder) AND ("
            + alternatives.joined(separator: " OR ") + ")"
        return (sql, fields)
    }

    /// ``after(start:end:id:idPlaceholder:)`` as one row comparison, `k1 >= ? AND (k1, k2, id) > (?, ?, ?)`, when every
    /// key and the id go in one direction (`nil` otherwise): the same rows, compared key by key as the order does, in
    /// one test a row instead of a chain of them (PostgreSQL: a fifth of an export's time on the server).
    public func afterRow(
        start: String, end: String, id: String, idPlaceholder: String = "?"
    ) -> (sql: String, fields: [SampleOrderField])? {
        guard keys.allSatisfy({ $0.ascending == idAscending }) else { return nil }
        let columns = keys.map { $0.key == .start ? start : end } + [id]
        let fields: [SampleOrderField] = keys.map { $0.key == .start ? .start : .end } + [.id]
        let comparison = idAscending ? ">" : "<"
        let sql =
            "\(columns[0]) \(comparison)= ? AND (\(columns.joined(separator: ", "))) \(comparison) (?, ?, \(idPlaceholder))"
        return (sql, [fields[0]] + fields)
    }
}
