extension QuantitySample {
    /// Why a store would reject this sample, as the catalog's `type`, or `nil` when it can be stored
    /// (`docs/store-semantics.md`, item 23): end before start, a value that is not finite or outside the type's
    /// range, an `externalUUID` that is not a non-empty string, a metadata number that is not finite, an id of the
    /// derived form that is not the sample's own (``idInvalidityReason``). Every engine applies this same rule.
    public func invalidityReason(as type: HealthType) -> String? {
        if let reason = Self.invalidityReason(start: start.milliseconds, end: end.milliseconds, value: value, as: type)
        {
            return reason
        }
        if let reason = metadata.invalidityReason { return reason }
        return idInvalidityReason
    }

    /// Why ``id`` cannot be this sample's, or `nil`: an id of the derived form (``Foundation/UUID/hasDerivedForm``)
    /// names only the sample of its natural key, and only one without a client id (`docs/store-semantics.md`,
    /// item 24), so that no id a writer chooses lands on another sample's derived id.
    public var idInvalidityReason: String? {
        guard id.hasDerivedForm else { return nil }
        return Self.derivedFormReason(
            hasClientID: metadata[MetadataKey.externalUUID] != nil, isOwn: hasDerivedID)
    }

    /// The reason for a derived-form id that is not the sample's own (shared with heartbeat series).
    static func derivedFormReason(hasClientID: Bool, isOwn: Bool) -> String? {
        if hasClientID {
            return "an id of the derived form (version 8) cannot name a sample with an externalUUID; leave the id out"
        }
        guard isOwn else {
            return "the id has the form of a derived id (version 8) but is not the one this sample's type, source, "
                + "device, start and end derive; leave it out, or give a version 4 or 7 UUID"
        }
        return nil
    }
}

extension QuantitySample {
    /// The part of the rule about times and value (shared with ``QuantitySeries``, whose samples are columns).
    public static func invalidityReason(start: Int64, end: Int64, value: Double, as type: HealthType) -> String? {
        if let reason = Instant.invalidityReason(start: start, end: end) { return reason }
        guard type.isSampleType else {
            return "\(type.identifier) is a \(type.kind.rawValue) type, not a quantity or category a sample can hold"
        }
        guard value.isFinite else { return "value is not a finite number" }
        if type.kind == .category {
            guard let integer = Int(exactly: value), type.name(of: integer) != nil else {
                return "\(type.identifier) value \(value) is not one of its values ("
                    + type.values.map { "\($0.name) \($0.value)" }.joined(separator: ", ") + ")"
            }
            return nil
        }
        if let range = type.validRange, !range.contains(value) {
            return "\(type.identifier) value \(value) \(type.canonicalUnit) is outside "
                + "\(range.lowerBound)...\(range.upperBound)"
        }
        return nil
    }
}

extension Instant {
    /// Why `start...end` (ms) is not a sample's interval, or `nil`: both in the years 1-9999, `end >= start`.
    public static func invalidityReason(start: Int64, end: Int64) -> String? {
        guard supportedMilliseconds.contains(start), supportedMilliseconds.contains(end) else {
            return "start (\(start) ms) and end (\(end) ms) must be within the years 1-9999"
        }
        guard end >= start else { return "end (\(end) ms) is before start (\(start) ms)" }
        return nil
    }
}

extension Dictionary where Key == String, Value == MetadataValue {
    /// The largest `syncVersion` a store accepts: 2^53, the largest whole number a double (and JSON) holds exactly.
    public static var maximumSyncVersion: Double { 9_007_199_254_740_992 }

    /// Why a store would refuse this metadata, or `nil`: numbers finite, an `externalUUID` a non-empty string, a
    /// `syncVersion` a whole number from 0 to ``maximumSyncVersion``.
    public var invalidityReason: String? {
        guard !isEmpty else { return nil }
        if let key = nonFiniteKey { return "metadata '\(key)' is not a finite number" }
        if case .some(let external) = self[MetadataKey.externalUUID] {
            guard case .string(let text) = external, !text.isEmpty else { return "externalUUID must be a string" }
        }
        if case .some(let version) = self[MetadataKey.syncVersion] {
            let whole: Bool
            switch version {
            case .number(let number):
                whole = number >= 0 && number <= Self.maximumSyncVersion && number.rounded(.towardZero) == number
            case .integer(let number):
                whole = number >= 0 && Double(number) <= Self.maximumSyncVersion
            default:
                whole = false
            }
            guard whole else { return "syncVersion must be a whole number from 0 to 2^53" }
        }
        return nil
    }

    /// `syncVersion` as an integer (0 when absent; valid metadata has been checked by ``invalidityReason``).
    public var syncVersion: Int64 {
        switch self[MetadataKey.syncVersion] {
        case .number(let number)?: Int64(exactly: number) ?? 0
        case .integer(let number)?: number
        default: 0
        }
    }

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

extension QuantitySeries {
    /// Each stream's type as the catalog has it, after checking the streams as every engine's batch save does:
    /// the type known and not a series, the stream's metadata once, then every sample's times and value. A failure
    /// names the sample by its place among all the streams' samples.
    public static func catalogued(_ streams: [QuantitySeries]) throws(InvalidSampleError) -> [HealthType] {
        var catalogued: [HealthType] = []
        var first = 0
        for series in streams {
            guard let known = HealthTypeCatalog.type(series.type.identifier), known.aggregation != .series else {
                throw InvalidSampleError(index: first, reason: "unknown type '\(series.type.identifier)'")
            }
            catalogued.append(known)
            // The first sample's own rule, then the metadata (a stream's samples all have ids derived from their
            // natural key, or, with an externalUUID, new ones: the id rule holds for each).
            if !series.metadata.isEmpty, !series.isEmpty,
                let reason = series.invalidityReason(at: 0, as: known) ?? series.metadata.invalidityReason
            {
                throw InvalidSampleError(index: first, reason: reason)
            }
            if let suspect = series.firstInvalidIndex(as: known) {
                for index in suspect..<series.count {
                    if let reason = series.invalidityReason(at: index, as: known) {
                        throw InvalidSampleError(index: first + index, reason: reason)
                    }
                }
            }
            first += series.count
        }
        return catalogued
    }

    /// The first sample that ``invalidityReason(at:as:)`` may refuse, or `nil` when it refuses none: for a quantity
    /// type, the rule's tests in one loop over the columns, without making a reason (this runs for every sample the
    /// gateway saves); for others, the first one it refuses.
    func firstInvalidIndex(as type: HealthType) -> Int? {
        guard type.kind == .quantity else { return starts.indices.first { invalidityReason(at: $0, as: type) != nil } }
        let times = Instant.supportedMilliseconds
        let range = type.validRange ?? -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        return starts.withUnsafeBufferPointer { starts in
            ends.withUnsafeBufferPointer { ends in
                values.withUnsafeBufferPointer { values in
                    for index in 0..<Swift.min(starts.count, ends.count, values.count) {
                        let start = starts[index]
                        let end = ends[index]
                        let value = values[index]
                        if !(times.contains(start) && times.contains(end) && end >= start && value.isFinite
                            && range.contains(value))
                        {
                            return index
                        }
                    }
                    return nil
                }
            }
        }
    }
}
