public import Foundation

/// Samples taken together: HealthKit's `HKCorrelation`. Two types exist (`docs/store-semantics.md`, item 27):
///
/// - `bloodPressure`: exactly one `bloodPressureSystolic` and one `bloodPressureDiastolic` sample, both with the
///   correlation's start and end;
/// - `food`: one or more dietary quantity samples (`dietaryEnergyConsumed`, `dietaryProtein`, ...), each within
///   the correlation's interval.
///
/// The members are ordinary samples: sample queries, statistics, merges and anchored changes of their types see
/// them. A store saves a correlation and its members in one transaction, and deletes them together: deleting the
/// correlation deletes its members, and deleting a member deletes the whole correlation, so that no correlation
/// is ever left half.
public struct Correlation: Hashable, Sendable, Identifiable {
    public var id: UUID
    /// `bloodPressure` or `food`.
    public var type: HealthType
    public var start: Instant
    public var end: Instant
    public var startOffsetSeconds: Int32
    /// The member samples (HealthKit's `objects`).
    public var objects: [QuantitySample]
    public var source: Source
    public var device: Device?
    public var subject: String?
    public var metadata: [String: MetadataValue]

    /// The most members a correlation may have (a meal with every dietary type HealthKit has fits many times).
    public static let maximumObjects = 256

    /// A correlation. Without an `id` it gets the id derived from its natural key `(type, source, device, start,
    /// end)`, as a quantity sample does, so that saving the same correlation twice stores it once.
    public init(
        id: UUID? = nil, type: HealthType, start: Instant, end: Instant, startOffsetSeconds: Int32 = 0,
        objects: [QuantitySample], source: Source, device: Device? = nil, subject: String? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id =
            id
            ?? QuantitySample.derivedID(
                type: type.identifier, source: source.identifier, device: device?.key, start: start, end: end)
        self.type = type
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.objects = objects
        self.source = source
        self.device = device
        self.subject = subject
        self.metadata = metadata
    }

    /// A blood pressure reading at `time` (or over `time...end`): the correlation and its two members, all from
    /// `source`, in mmHg.
    public static func bloodPressure(
        systolic: Double, diastolic: Double, at time: Instant, end: Instant? = nil, startOffsetSeconds: Int32 = 0,
        source: Source, device: Device? = nil, subject: String? = nil, metadata: [String: MetadataValue] = [:]
    ) -> Correlation {
        let end = end ?? time
        func member(_ type: HealthType, _ value: Double) -> QuantitySample {
            QuantitySample(
                type: type, start: time, end: end, startOffsetSeconds: startOffsetSeconds, value: value,
                source: source, device: device, subject: subject)
        }
        return Correlation(
            type: .bloodPressure, start: time, end: end, startOffsetSeconds: startOffsetSeconds,
            objects: [member(.bloodPressureSystolic, systolic), member(.bloodPressureDiastolic, diastolic)],
            source: source, device: device, subject: subject, metadata: metadata)
    }

    public var provenance: Provenance { Provenance(source: source.identifier, device: device?.key) }

    /// The members of `type` (HealthKit's `objects(for:)`).
    public func objects(for type: HealthType) -> [QuantitySample] {
        objects.filter { $0.type == type }
    }

    /// The member types, each once, in the order of ``objects``.
    public var memberTypes: [HealthType] {
        var seen: Set<String> = []
        return objects.compactMap { member in
            seen.insert(member.type.identifier).inserted ? HealthTypeCatalog.type(member.type.identifier) : nil
        }
    }

    /// Whether `type` may be a member of a correlation of `correlationType`.
    public static func accepts(_ type: HealthType, in correlationType: HealthType) -> Bool {
        switch correlationType.identifier {
        case HealthType.bloodPressure.identifier:
            type == .bloodPressureSystolic || type == .bloodPressureDiastolic
        case HealthType.food.identifier:
            type.kind == .quantity && type.identifier.hasPrefix("dietary")
        default:
            false
        }
    }

    /// Why a store would reject this correlation, or `nil`: a correlation type of the catalog; a valid interval
    /// and metadata; members of the types it accepts (``accepts(_:in:)``), at most ``maximumObjects``, each a valid
    /// sample from the correlation's source and subject, with distinct ids; blood pressure exactly one systolic and
    /// one diastolic over the correlation's own interval, food one or more members within it. Member problems
    /// name the member (1-based).
    public var invalidityReason: String? {
        guard let known = HealthTypeCatalog.type(type.identifier), known.kind == .correlation else {
            return "'\(type.identifier)' is not a correlation type (bloodPressure, food)"
        }
        if let reason = Instant.invalidityReason(start: start.milliseconds, end: end.milliseconds) { return reason }
        if let reason = metadata.invalidityReason { return reason }
        if id.hasDerivedForm,
            id
                != QuantitySample.derivedID(
                    type: type.identifier, source: source.identifier, device: device?.key, start: start, end: end)
        {
            return QuantitySample.derivedFormReason(hasClientID: false, isOwn: false)
        }
        guard !objects.isEmpty else { return "a \(known.identifier) correlation needs at least one sample" }
        guard objects.count <= Self.maximumObjects else {
            return "a correlation holds at most \(Self.maximumObjects) samples, not \(objects.count)"
        }
        var ids: Set<UUID> = [id]
        for (index, member) in objects.enumerated() {
            let place = "sample \(index + 1) of the correlation"
            guard let memberType = HealthTypeCatalog.type(member.type.identifier),
                Self.accepts(memberType, in: known)
            else {
                return known == .bloodPressure
                    ? "\(place): a bloodPressure correlation holds bloodPressureSystolic and bloodPressureDiastolic, "
                        + "not \(member.type.identifier)"
                    : "\(place): a food correlation holds dietary quantity samples, not \(member.type.identifier)"
            }
            if let reason = member.invalidityReason(as: memberType) { return "\(place): \(reason)" }
            guard ids.insert(member.id).inserted else { return "\(place): id \(member.id) is given twice" }
            guard member.source == source, member.subject == subject else {
                return "\(place): its source and subject must be the correlation's"
            }
            if known == .bloodPressure {
                guard member.start == start, member.end == end else {
                    return "\(place): a blood pressure sample must have the correlation's start and end"
                }
            } else if member.start < start || member.end > end {
                return "\(place): a food sample must lie within the correlation's interval"
            }
        }
        if known == .bloodPressure {
            guard objects.count == 2, objects(for: .bloodPressureSystolic).count == 1,
                objects(for: .bloodPressureDiastolic).count == 1
            else {
                return "a bloodPressure correlation holds exactly one bloodPressureSystolic and one "
                    + "bloodPressureDiastolic sample"
            }
        }
        return nil
    }
}

/// One page of a correlation query.
public struct CorrelationPage: Hashable, Sendable {
    public var correlations: [Correlation]
    /// Pass as ``SampleQuery/cursor`` to get the next page; `nil` when this was the last.
    public var next: SampleCursor?

    public init(correlations: [Correlation], next: SampleCursor?) {
        self.correlations = correlations
        self.next = next
    }
}

extension HealthType {
    public static let bloodPressure = HealthTypeCatalog.entry("bloodPressure")
    public static let food = HealthTypeCatalog.entry("food")
    public static let workout = HealthTypeCatalog.entry("workout")
    /// Workouts' routes: granted apart from the workouts (`docs/store-semantics.md`, item 28).
    public static let workoutRoute = HealthTypeCatalog.entry("workoutRoute")
    public static let bloodPressureSystolic = HealthTypeCatalog.entry("bloodPressureSystolic")
    public static let bloodPressureDiastolic = HealthTypeCatalog.entry("bloodPressureDiastolic")
}
