public import Foundation
public import Health

/// What both engines do with the rows their SQL returns: the metadata predicates SQL does not
/// check, and the cursor that continues a page.
extension SampleQuery {
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
