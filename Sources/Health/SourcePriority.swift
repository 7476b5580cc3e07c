/// What the person decided for a type's merge (`docs/store-semantics.md`, "The merge of cumulative types", D2): the
/// provenances that count first, highest first, and what happens to the others.
///
/// A store keeps one per type and one default for the types without their own; a statistics query may bring its
/// own instead (``StatisticsQuery/priority``).
public struct SourcePriority: Hashable, Sendable, CustomStringConvertible {
    /// The most entries a list may have: far more than the sources and devices anyone ranks.
    public static let maximumEntries = 256

    /// Highest first. An entry's device is a device key, `nil` (samples without a device) or
    /// ``Provenance/anyDevice`` (every sample of the source).
    public var order: [Provenance]
    public var unranked: CumulativeMerge.UnrankedPolicy

    public init(order: [Provenance], unranked: CumulativeMerge.UnrankedPolicy = .gapFill) {
        self.order = order
        self.unranked = unranked
    }

    /// No list: every provenance is unranked and fills gaps, the later write winning (the merge's default).
    public static let none = SourcePriority(order: [], unranked: .gapFill)

    /// The list as `wearhouse priority` prints and takes it: entries joined by `, `, then `(unranked: exclude)`
    /// when that is the policy.
    public var description: String {
        let list = order.map(Self.spelling).joined(separator: ", ")
        return unranked == .gapFill ? list : list + " (unranked: exclude)"
    }

    /// Why a store refuses this priority, or `nil`: too many entries, an entry twice, a name that is empty, too
    /// long or holds control characters, commas or brackets, or `exclude` with no entry (nothing would count).
    public var invalidityReason: String? {
        if order.count > Self.maximumEntries { return "at most \(Self.maximumEntries) entries, not \(order.count)" }
        if order.isEmpty && unranked == .exclude {
            return "an empty list that excludes the unranked drops every sample"
        }
        for (index, entry) in order.enumerated() {
            if entry.source.isEmpty { return "entry \(index + 1) has no source" }
            if let problem = Self.problem(with: entry.source) { return "entry \(index + 1): the source \(problem)" }
            if let device = entry.device, device != Provenance.anyDevice {
                if device.isEmpty { return "entry \(index + 1) has an empty device key" }
                if let problem = Self.problem(with: device) { return "entry \(index + 1): the device \(problem)" }
            }
            if order[..<index].contains(entry) { return "entry \(index + 1) (\(Self.spelling(entry))) is listed twice" }
        }
        return nil
    }

    /// An entry as it is written: `SOURCE` (every device of the source), `SOURCE[DEVICE]`, or `SOURCE[]` (only
    /// samples without a device).
    public static func spelling(_ entry: Provenance) -> String {
        switch entry.device {
        case Provenance.anyDevice?: entry.source
        case nil: entry.source + "[]"
        case let device?: entry.source + "[" + device + "]"
        }
    }

    /// Why `text` is not a priority list, or the entries it names, in order: comma-separated `SOURCE`,
    /// `SOURCE[DEVICE]` or `SOURCE[]`. Sources and device keys are 1-256 characters without control characters,
    /// commas or brackets; an entry may not appear twice; at most ``maximumEntries``.
    public static func parseEntries(_ text: String) -> Result<[Provenance], PriorityListError> {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingBlanks)
        guard items.count <= maximumEntries else {
            return .failure(.init("at most \(maximumEntries) entries, not \(items.count)"))
        }
        var entries: [Provenance] = []
        for (index, item) in items.enumerated() {
            let position = "entry \(index + 1)"
            var source = item
            var device: String? = Provenance.anyDevice
            if let open = item.firstIndex(of: "[") {
                guard item.hasSuffix("]") else {
                    return .failure(
                        .init("\(position) '\(item)': a device goes in brackets at the end, SOURCE[DEVICE]"))
                }
                source = String(item[..<open])
                let inside = String(item[item.index(after: open)..<item.index(before: item.endIndex)])
                if inside.isEmpty {
                    device = nil
                } else if let problem = problem(with: inside) {
                    return .failure(.init("\(position) '\(item)': the device \(problem)"))
                } else {
                    device = inside
                }
            }
            if source.isEmpty {
                return .failure(.init("\(position) is empty: name a source, e.g. wearhouse or com.example.watch"))
            }
            if let problem = problem(with: source) {
                return .failure(.init("\(position) '\(item)': the source \(problem)"))
            }
            let entry = Provenance(source: source, device: device)
            if entries.contains(entry) { return .failure(.init("\(position) '\(item)' is listed twice")) }
            entries.append(entry)
        }
        return .success(entries)
    }

    private static func problem(with name: String) -> String? {
        if name.count > 256 { return "is longer than 256 characters" }
        if name == Provenance.anyDevice { return "may not be '\(Provenance.anyDevice)'" }
        if name.unicodeScalars.contains(where: {
            $0.value < 0x20 || $0.value == 0x7F || "[],".unicodeScalars.contains($0)
        }) {
            return "may not hold control characters, commas or brackets"
        }
        return nil
    }
}

/// A priority list that cannot be read, with what is wrong and where.
public struct PriorityListError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Provenance {
    /// The device of a priority entry that matches every device of its source (and samples without one).
    public static let anyDevice = "*"

    /// Whether this priority entry ranks `provenance` (`docs/store-semantics.md`, item 4).
    public func matches(_ provenance: Provenance) -> Bool {
        source == provenance.source && (device == Self.anyDevice || device == provenance.device)
    }
}

extension Substring {
    fileprivate var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
