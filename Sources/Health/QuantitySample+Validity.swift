extension QuantitySample {
    /// Why a store would reject this sample, as the catalog's `type`, or `nil` when it can be stored
    /// (`docs/store-semantics.md`, item 23): end before start, a value that is not finite or outside the type's
    /// range, an `externalUUID` that is not a non-empty string, a metadata number that is not finite. Every engine
    /// applies this same rule.
    public func invalidityReason(as type: HealthType) -> String? {
        if let reason = Self.invalidityReason(start: start.milliseconds, end: end.milliseconds, value: value, as: type)
        {
            return reason
        }
        if !metadata.isEmpty {
            if case .some(let external) = metadata[MetadataKey.externalUUID] {
                guard case .string(let text) = external, !text.isEmpty else { return "externalUUID must be a string" }
            }
            if let key = metadata.nonFiniteKey { return "metadata '\(key)' is not a finite number" }
        }
        return nil
    }
}

extension QuantitySample {
    /// The part of the rule about times and value (shared with ``QuantitySeries``, whose samples are columns).
    public static func invalidityReason(start: Int64, end: Int64, value: Double, as type: HealthType) -> String? {
        guard end >= start else { return "end (\(end) ms) is before start (\(start) ms)" }
        guard value.isFinite else { return "value is not a finite number" }
        if let range = type.validRange, !range.contains(value) {
            return "\(type.identifier) value \(value) \(type.canonicalUnit) is outside "
                + "\(range.lowerBound)...\(range.upperBound)"
        }
        return nil
    }
}

extension Dictionary where Key == String, Value == MetadataValue {
    /// The key of a number that is not finite (JSON cannot hold it, so no store can keep it), if there is one: such
    /// metadata is refused when a sample is saved rather than lost.
    public var nonFiniteKey: String? {
        first { _, value in
            switch value {
            case .number(let number), .quantity(let number, _): !number.isFinite
            default: false
            }
        }?.key
    }
}
