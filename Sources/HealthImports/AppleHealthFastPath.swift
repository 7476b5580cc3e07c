import Foundation
import Health

/// A `<Record>`'s metadata entries as bytes (`key`, `value` of each `<MetadataEntry>`, empty when absent), in
/// document order, each followed by a NUL byte: what the fast path compares with the last records' and the
/// general path turns into strings. Kept by the reader from record to record, so that reading one allocates
/// nothing.
struct MetadataBytes {
    struct Entry {
        var key: Range<Int>
        var value: Range<Int>
    }

    private(set) var storage: [UInt8] = []
    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    /// Adds the entry of a `<MetadataEntry>`'s attributes.
    mutating func append(_ attributes: ElementAttributes) {
        let keyStart = storage.count
        if let key = attributes.value("key") { storage.append(contentsOf: attributes.bytes.storage[key]) }
        let keyEnd = storage.count
        storage.append(0)
        let valueStart = storage.count
        if let value = attributes.value("value") { storage.append(contentsOf: attributes.bytes.storage[value]) }
        entries.append(Entry(key: keyStart..<keyEnd, value: valueStart..<storage.count))
        storage.append(0)
    }

    /// The entries as strings, as the general path reads them.
    var pairs: [(String, String)] {
        entries.map {
            (String(decoding: storage[$0.key], as: UTF8.self), String(decoding: storage[$0.value], as: UTF8.self))
        }
    }
}

/// The fast path of a top-level `<Record>` without beats (nearly every element of an export): its fields read
/// from the attributes' bytes, and the type, source, device, unit, category value and metadata of the last
/// records kept with the bytes they came from, so that a record like the one before it costs byte comparisons,
/// two times parsed from bytes and one number, not a dictionary of strings, a device text parsed and a sample
/// id hashed.
///
/// It decides nothing on its own: whatever it has not seen yet it gets from the general path's own functions
/// (``AppleHealthMapping``, the reader's `source`, `device`, `metadata` and `unit`), keyed by the exact bytes,
/// and it declines (returns `nil`) every record those would refuse or that holds anything unusual, so that the
/// general path reads it, decides and words the reason. The samples are the general path's, field for field
/// (Tests/HealthImportsTests/AppleHealthFastPathTests.swift holds the two equal on generated and mutated exports);
/// their id is a placeholder, since a batch names its samples by their natural key.
///
/// A sample comes as a ``Point`` (its times, offset and value) of the fast path's current ``stream``: the type,
/// source, device and metadata it kept last, numbered anew whenever one of them changes, so that the reader adds
/// a point of the stream it is filling as three numbers, and makes the whole sample (``sample(_:)``) only for the
/// first point of a stream.
struct AppleHealthFastPath {
    /// A sample of the current ``stream``.
    struct Point {
        var start: Int64
        var end: Int64
        var offset: Int32
        var value: Double
    }

    /// The number of the current type, source, device and metadata: another whenever one of them changes.
    private(set) var stream = 0
    /// The current type's identifier.
    var typeIdentifier: String { type?.identifier ?? "" }

    /// The id every fast sample carries: a version 4 UUID, which a batch drops (not the derived form, so no
    /// validity rule looks at it).
    static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0))

    /// The record's attributes the fast path reads, by position in ``Fields``.
    private enum Field: Int, CaseIterable {
        case type, unit, value, sourceName, sourceVersion, device, creationDate, startDate, endDate
    }

    /// Where each field's value is in the attributes' storage (`nil`: absent).
    private struct Fields {
        var ranges: [Range<Int>?] = Array(repeating: nil, count: Field.allCases.count)
        subscript(field: Field) -> Range<Int>? { ranges[field.rawValue] }
    }

    private var typeBytes: [UInt8] = []
    private var type: HealthType?
    private var typeSeen = false
    /// `Record ` and the type, as the general path names what it does not import.
    private var typeName = ""

    /// A key being built (reused, so that building one allocates nothing).
    private var scratch: [UInt8] = []
    private var sourceBytes: [UInt8] = []
    private var source: Source?

    private var deviceBytes: [UInt8] = []
    private var device: Device?
    private var deviceSeen = false

    /// The unit's bytes and the type whose unit it was compared with: whether it is the type's own, and if not,
    /// the units to convert between.
    private var unitBytes: [UInt8] = []
    private var unitType = ""
    private var unitIsCanonical = false
    private var conversion: (from: HealthUnit, to: HealthUnit)?

    private var categoryBytes: [UInt8] = []
    private var categoryType = ""
    private var categoryValue: Int?

    /// The metadata of recent records by their entries' bytes (a few kinds alternate within a type).
    private var metadataCache: [(bytes: [UInt8], metadata: [String: MetadataValue], valid: Bool)] = []
    private var metadataNext = 0
    static let metadataCacheSize = 8
    /// The metadata of the last sample: which of the cache's (-1: none), as found (``stream`` changes with it).
    private var metadata: [String: MetadataValue] = [:]
    private var metadataSlot = -1

    /// The sample of a record with these attributes and metadata entries, or that its type is not in the catalog,
    /// or that the general path is to read it. Counts a creation date and a converted value on `reader` as the
    /// general path does.
    mutating func sample(_ attributes: ElementAttributes, _ metadata: MetadataBytes, reader: AppleHealthReader)
        -> Outcome
    {
        attributes.bytes.storage.withUnsafeBufferPointer { storage in
            let fields = fields(attributes, storage)
            if let point = sample(storage, fields, metadata, reader: reader) { return .sample(point) }
            // A type the catalog lacks: the general path's reason, under the general path's name for it.
            if fields[.type] != nil, typeSeen, type == nil { return .notInCatalog(typeName) }
            return .general
        }
    }

    /// The whole sample of `point`, of the current stream (its id a placeholder); `nil` before the first.
    func sample(_ point: Point) -> QuantitySample? {
        guard let type, let source else { return nil }
        return QuantitySample(
            id: Self.placeholderID, type: type, start: Instant(milliseconds: point.start),
            end: Instant(milliseconds: point.end), startOffsetSeconds: point.offset, value: point.value,
            source: source, device: device, metadata: metadata)
    }

    /// What the fast path made of a record.
    enum Outcome {
        /// A sample of the current ``stream``.
        case sample(Point)
        /// Of a type the catalog lacks (``AppleHealthReader``'s reason: "this type is not in the type catalog"),
        /// under this name (`Record HKQuantityTypeIdentifierWalkingSpeed`).
        case notInCatalog(String)
        /// For the general path.
        case general
    }

    private func fields(_ attributes: ElementAttributes, _ storage: UnsafeBufferPointer<UInt8>) -> Fields {
        var fields = Fields()
        guard let base = storage.baseAddress else { return fields }
        func equal(_ range: Range<Int>, _ name: StaticString) -> Bool {
            range.count == name.utf8CodeUnitCount && memcmp(base + range.lowerBound, name.utf8Start, range.count) == 0
        }
        for entry in attributes.bytes.entries[attributes.entries] {
            let name = entry.name
            let field: Field? =
                switch name.count {
                case 4: equal(name, "type") ? .type : equal(name, "unit") ? .unit : nil
                case 5: equal(name, "value") ? .value : nil
                case 6: equal(name, "device") ? .device : nil
                case 7: equal(name, "endDate") ? .endDate : nil
                case 9: equal(name, "startDate") ? .startDate : nil
                case 10: equal(name, "sourceName") ? .sourceName : nil
                case 12: equal(name, "creationDate") ? .creationDate : nil
                case 13: equal(name, "sourceVersion") ? .sourceVersion : nil
                default: nil
                }
            if let field { fields.ranges[field.rawValue] = entry.value }
        }
        return fields
    }

    private static func string(_ storage: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: storage[range]), as: UTF8.self)
    }

    private static func same(_ kept: [UInt8], _ storage: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard kept.count == range.count, let base = storage.baseAddress else { return false }
        return kept.withUnsafeBufferPointer { memcmp($0.baseAddress ?? base, base + range.lowerBound, range.count) }
            == 0
    }

    private mutating func sample(
        _ storage: UnsafeBufferPointer<UInt8>, _ fields: Fields, _ metadataBytes: MetadataBytes,
        reader: AppleHealthReader
    ) -> Point? {
        // The type.
        guard let typeRange = fields[.type] else { return nil }
        if !typeSeen || !Self.same(typeBytes, storage, typeRange) {
            typeBytes = Array(storage[typeRange])
            let text = Self.string(storage, typeRange)
            type = AppleHealthMapping.type(text)
            typeName = "Record \(text.prefix(96))"
            typeSeen = true
            stream += 1
        }
        guard let type, type.isSampleType else { return nil }

        // The interval (``AppleHealthReader/interval(_:)``).
        guard let startRange = fields[.startDate],
            let (start, offset) = AppleHealthMapping.time(bytes: UnsafeBufferPointer(rebasing: storage[startRange]))
        else { return nil }
        var end = start
        if let endRange = fields[.endDate] {
            guard let parsed = AppleHealthMapping.time(bytes: UnsafeBufferPointer(rebasing: storage[endRange]))
            else { return nil }
            end = parsed.instant
        }
        guard end >= start else { return nil }

        // The value, in the type's unit.
        guard let valueRange = fields[.value] else { return nil }
        let value: Double
        var converted = false
        if type.kind == .category {
            if categoryType != type.identifier || !Self.same(categoryBytes, storage, valueRange) {
                categoryBytes = Array(storage[valueRange])
                categoryType = type.identifier
                categoryValue = AppleHealthMapping.categoryValue(Self.string(storage, valueRange), of: type)
            }
            guard let categoryValue else { return nil }
            value = Double(categoryValue)
        } else {
            guard let number = Double(Self.string(storage, valueRange)), number.isFinite else { return nil }
            if let unitRange = fields[.unit] {
                if unitType != type.identifier || !Self.same(unitBytes, storage, unitRange) {
                    unitBytes = Array(storage[unitRange])
                    unitType = type.identifier
                    let text = Self.string(storage, unitRange)
                    unitIsCanonical = text == type.canonicalUnit
                    conversion = nil
                    if !unitIsCanonical, let from = try? reader.unit(text),
                        let to = try? reader.unit(type.canonicalUnit)
                    {
                        conversion = (from, to)
                    }
                }
                if unitIsCanonical {
                    value = number
                } else {
                    guard let conversion, let result = try? conversion.from.convert(number, to: conversion.to) else {
                        return nil
                    }
                    value = result
                    converted = true
                }
            } else {
                value = number
            }
        }
        let span = end.milliseconds - start.milliseconds
        guard span <= (type.aggregation == .cumulative ? 7 * 86_400_000 : 86_400_000) else { return nil }

        // Source, device and metadata.
        guard source(storage, fields, reader) != nil, device(storage, fields, reader) != nil else { return nil }
        guard let metadataValid = metadata(metadataBytes, reader) else { return nil }
        if QuantitySample.invalidityReason(
            start: start.milliseconds, end: end.milliseconds, value: value, as: type) != nil
            || !metadataValid
        {
            return nil
        }
        if fields[.creationDate] != nil { reader.creationDates += 1 }
        if converted { reader.converted[type.identifier, default: 0] += 1 }
        return Point(start: start.milliseconds, end: end.milliseconds, offset: offset, value: value)
    }

    /// The source of `sourceName` and `sourceVersion`: the last record's when their bytes are the same, else the
    /// general path's.
    private mutating func source(_ storage: UnsafeBufferPointer<UInt8>, _ fields: Fields, _ reader: AppleHealthReader)
        -> Source?
    {
        // The key: 0xFF (or 0xFE: none) and the name's bytes, then the same for the version (0xFE and 0xFF are
        // bytes no UTF-8 text holds).
        let name = fields[.sourceName]
        let version = fields[.sourceVersion]
        scratch.removeAll(keepingCapacity: true)
        for part in [name, version] {
            if let part {
                scratch.append(0xFF)
                scratch.append(contentsOf: storage[part])
            } else {
                scratch.append(0xFE)
            }
        }
        if source != nil, scratch == sourceBytes { return source }
        guard
            let found = try? reader.source(
                name: name.map { Self.string(storage, $0) }, version: version.map { Self.string(storage, $0) })
        else { return nil }
        sourceBytes = scratch
        source = found
        stream += 1
        return found
    }

    /// The device of the `device` text (`.some(nil)` without one): a device text is read once for all records
    /// whose text after the object address (`<<HKDevice: 0x...>`, which changes from record to record and which
    /// ``AppleHealthMapping/device(_:)`` drops) is the same.
    private mutating func device(_ storage: UnsafeBufferPointer<UInt8>, _ fields: Fields, _ reader: AppleHealthReader)
        -> Device??
    {
        scratch.removeAll(keepingCapacity: true)
        guard let range = fields[.device] else {
            // None (0xFD, a byte no UTF-8 text holds, as the key).
            scratch.append(0xFD)
            if !deviceSeen || scratch != deviceBytes {
                deviceBytes = scratch
                device = nil
                deviceSeen = true
                stream += 1
            }
            return .some(nil)
        }
        let key = Self.deviceKey(storage, range)
        scratch.append(key == range ? 0xFE : 0xFF)
        scratch.append(contentsOf: storage[key])
        if deviceSeen, scratch == deviceBytes { return .some(device) }
        guard let found = try? reader.device(text: Self.string(storage, range)) else { return nil }
        deviceBytes = scratch
        device = found
        deviceSeen = true
        stream += 1
        return .some(found)
    }

    /// The part of a device text its device depends on: after the first `>` when it starts `<<HKDevice:` (as
    /// ``AppleHealthMapping/device(_:)`` reads it, character by character: so only where the byte after the
    /// prefix and after the `>` is ASCII, which no combining mark is), else the whole text (which the key tells
    /// apart from a part by its first byte).
    static func deviceKey(_ storage: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        let prefix: StaticString = "<<HKDevice:"
        let count = prefix.utf8CodeUnitCount
        guard range.count > count, let base = storage.baseAddress,
            memcmp(base + range.lowerBound, prefix.utf8Start, count) == 0, storage[range.lowerBound + count] < 0x80
        else { return range }
        var index = range.lowerBound + count
        while index < range.upperBound, storage[index] != UInt8(ascii: ">") { index += 1 }
        guard index < range.upperBound, index + 1 == range.upperBound || storage[index + 1] < 0x80 else {
            return range
        }
        return index + 1..<range.upperBound
    }

    /// Makes the metadata of these entries the current one (a recent record's with the same bytes, else the
    /// general path's): whether it is valid, `nil` when the general path refuses it.
    private mutating func metadata(_ entries: MetadataBytes, _ reader: AppleHealthReader) -> Bool? {
        if entries.isEmpty {
            use([:], slot: -1)
            return true
        }
        let bytes = entries.storage
        for (slot, cached) in metadataCache.enumerated() where cached.bytes == bytes {
            use(cached.metadata, slot: slot)
            return cached.valid
        }
        guard let found = try? reader.metadata(entries.pairs) else { return nil }
        let slot: Int
        if metadataCache.count < Self.metadataCacheSize {
            slot = metadataCache.count
            metadataCache.append((bytes, found, found.invalidityReason == nil))
        } else {
            slot = metadataNext
            metadataCache[slot] = (bytes, found, found.invalidityReason == nil)
            metadataNext = (metadataNext + 1) % Self.metadataCacheSize
        }
        // A slot refilled holds other metadata: another stream, whatever its number.
        metadataSlot = -2
        use(found, slot: slot)
        return metadataCache[slot].valid
    }

    private mutating func use(_ found: [String: MetadataValue], slot: Int) {
        guard slot != metadataSlot else { return }
        metadata = found
        metadataSlot = slot
        stream += 1
    }
}
