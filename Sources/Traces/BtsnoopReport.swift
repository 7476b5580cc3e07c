public import GATT

/// What the importer made of every record of a capture. The categories add up to ``records``: every record is
/// accounted for.
public struct BtsnoopReport: Hashable, Sendable, CustomStringConvertible {
    /// Where a record went.
    public enum Category: String, Hashable, Sendable, CaseIterable, Comparable {
        /// ATT notifications, indications and read responses (the values a trace keeps).
        case value
        /// ATT discovery: Read By Type, Find Information, Read By Group Type, Find By Type Value.
        case discovery
        /// Other ATT: requests, writes, confirmations, MTU exchange, errors, traffic to the capturing host's server.
        case att
        /// Other L2CAP channels: signalling, SMP, dynamic channels.
        case l2cap
        /// HCI commands and events, SCO and ISO data, monitor notes and index changes.
        case hci
        /// A record the importer does not know (an unknown packet type or monitor opcode).
        case unknown
        /// A record cut short or inconsistent (bad lengths, a fragment without its start, a PDU never completed).
        case damaged

        public static func < (lhs: Self, rhs: Self) -> Bool {
            (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
        }
    }

    /// A record that was unknown or damaged, and why.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// 1-based position in the capture.
        public var record: Int
        public var reason: String
        public var description: String { "record \(record): \(reason)" }
    }

    public var datalink: UInt32 = 0
    public var records = 0
    public var counts: [Category: Int] = [:]
    /// Unknown and damaged records with their numbers (at most ``problemLimit`` kept; ``counts`` has them all).
    public var problems: [Problem] = []
    public static let problemLimit = 200
    /// Values written to the trace.
    public var notifications = 0
    public var indications = 0
    public var reads = 0
    public var connectionEvents = 0
    /// Values left out because no characteristic UUID is known for their handle: handle -> count.
    public var unmappedHandles: [UInt16: Int] = [:]
    /// Handles resolved from the capture's discovery traffic (all devices).
    public var discoveredHandles = 0
    /// What discovery in the capture resolved: device address -> handle -> characteristic.
    public var handles: [String: [UInt16: BluetoothUUID]] = [:]
    /// The devices the values came from.
    public var devices: [String] = []

    public init() {}

    /// Whether the categories add up to the number of records.
    public var isComplete: Bool { counts.values.reduce(0, +) == records }

    public func count(_ category: Category) -> Int { counts[category] ?? 0 }

    public var description: String {
        var lines = [
            "\(records) records (datalink \(datalink)): "
                + Category.allCases.map { "\(count($0)) \($0.rawValue)" }.joined(separator: ", ")
        ]
        lines.append(
            "\(notifications) notifications, \(indications) indications, \(reads) reads, "
                + "\(connectionEvents) connection events from \(devices.count) device(s); "
                + "\(discoveredHandles) handles found by discovery")
        if !unmappedHandles.isEmpty {
            let handles = unmappedHandles.sorted { $0.key < $1.key }.map {
                "0x\(String($0.key, radix: 16)) (\($0.value))"
            }
            lines.append(
                "values on handles without a known characteristic (left out; give --map handle=uuid): "
                    + handles.joined(separator: ", "))
        }
        for problem in problems.prefix(20) { lines.append(problem.description) }
        if problems.count > 20 { lines.append("... and \(count(.unknown) + count(.damaged) - 20) more") }
        return lines.joined(separator: "\n")
    }
}
