public import GATT
internal import Support

/// Options for ``BtsnoopImporter``.
public struct BtsnoopImportOptions: Hashable, Sendable {
    /// Handle -> characteristic, for captures that start after discovery (`--map 0x0010=2a37,...`). Wins over
    /// what the capture's discovery says.
    public var handleMap: [UInt16: BluetoothUUID]
    /// The address to give connections whose connection event is not in the capture.
    public var address: String?
    /// The header's `origin`, e.g. `btsnoop:capture.log`.
    public var origin: String?
    public var recorder: String?

    public init(
        handleMap: [UInt16: BluetoothUUID] = [:], address: String? = nil, origin: String? = nil,
        recorder: String? = nil
    ) {
        self.handleMap = handleMap
        self.address = address?.uppercased()
        self.origin = origin
        self.recorder = recorder
    }

    /// Parses `0x0010=2a37,17=00002a53-0000-1000-8000-00805f9b34fb` (handles in hex with `0x`, else decimal).
    public static func parseMap(_ text: String) throws(BtsnoopImportError) -> [UInt16: BluetoothUUID] {
        var map: [UInt16: BluetoothUUID] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else {
                throw BtsnoopImportError("--map: expected handle=uuid, not \(ErrorEcho.echo(pair))")
            }
            let handleText = parts[0].trimmingSpaces
            let handle: UInt16? =
                handleText.lowercased().hasPrefix("0x")
                ? UInt16(handleText.dropFirst(2), radix: 16) : UInt16(handleText)
            guard let handle else {
                throw BtsnoopImportError("--map: \(ErrorEcho.echo(handleText)) is not a handle (0x0010 or 16)")
            }
            guard let uuid = BluetoothUUID(parts[1].trimmingSpaces) else {
                throw BtsnoopImportError("--map: \(ErrorEcho.echo(parts[1])) is not a Bluetooth UUID")
            }
            map[handle] = uuid
        }
        return map
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        drop { $0 == " " }.reversed().drop { $0 == " " }.reversed().reduce(into: Substring()) { $0.append($1) }
    }
}

/// A capture the importer cannot use at all.
public struct BtsnoopImportError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String
    /// What was found, when the file was readable but held nothing usable.
    public var report: BtsnoopReport?

    public init(_ reason: String, report: BtsnoopReport? = nil) {
        self.reason = reason
        self.report = report
    }

    public var description: String { reason }
}

/// A capture turned into trace records, with the account of every record.
public struct BtsnoopImport: Sendable {
    public var records: [TraceRecord]
    public var report: BtsnoopReport
}

/// Turns a btsnoop capture (Android's HCI snoop log, `btmon -w`) into the trace records a recording would have:
/// L2CAP reassembled from ACL fragments, ATT on channel 4, notifications, indications and read responses (matched
/// to their requests), handles resolved from the capture's own discovery (characteristic declarations in Read By
/// Type responses, Find Information responses) or from ``BtsnoopImportOptions/handleMap``, device addresses from
/// the connection events, Device Information from the reads.
///
/// Unknown and damaged records are counted with their numbers (``BtsnoopReport``); only a capture with nothing
/// usable in it is an error.
public enum BtsnoopImporter {
    /// Imports `bytes`.
    ///
    /// - Throws: ``BtsnoopImportError`` when the file is not a btsnoop capture of a known datalink, or holds no
    ///   value and no connection event.
    public static func importCapture(
        _ bytes: [UInt8], options: BtsnoopImportOptions = BtsnoopImportOptions()
    ) throws(BtsnoopImportError) -> BtsnoopImport {
        let capture: Btsnoop.Capture
        do throws(Btsnoop.FormatError) {
            capture = try Btsnoop.parse(bytes)
        } catch {
            throw BtsnoopImportError(error.reason)
        }
        guard let datalink = Btsnoop.Datalink(rawValue: capture.datalink) else {
            throw BtsnoopImportError(
                "btsnoop datalink \(capture.datalink) is not supported (1001 HCI, 1002 H4/Android, 2001 btmon)")
        }
        var state = CaptureState(datalink: datalink, options: options)
        for record in capture.records { state.process(record) }
        if let truncated = capture.truncatedRecord {
            state.report.records += 1
            state.classify([truncated.number], .damaged, truncated.reason)
        }
        let result = state.finish()
        guard
            result.report.connectionEvents + result.report.notifications + result.report.indications
                + result.report.reads > 0
        else {
            throw BtsnoopImportError(
                "nothing usable in the capture: no ATT values and no connections", report: result.report)
        }
        return result
    }
}

// MARK: - The capture walk

private struct ConnectionKey: Hashable {
    var index: UInt16
    var handle: UInt16
}

private struct FragmentKey: Hashable {
    var connection: ConnectionKey
    var incoming: Bool
}

private struct Reassembly {
    var data: [UInt8]
    var records: [Int]
}

private enum PendingRequest {
    case read(UInt16)
    case readBlob(UInt16, offset: UInt16)
    case readByType(BluetoothUUID)
    case other
}

private struct Connection {
    var address: String
    var pending: PendingRequest?
    /// The last read value event per handle (long reads append to it).
    var lastRead: [UInt16: Int] = [:]
}

private struct ValueEvent {
    var kind: TraceValue.Kind
    var address: String
    var handle: UInt16
    var bytes: [UInt8]
    var at: Timestamp
}

private enum CaptureEvent {
    case connection(TraceConnection)
    case value(ValueEvent)
}

private struct CaptureState {
    let datalink: Btsnoop.Datalink
    let options: BtsnoopImportOptions
    var report = BtsnoopReport()
    var dispositions: [Int: BtsnoopReport.Category] = [:]
    var adapters: [UInt16: String] = [:]
    var connections: [ConnectionKey: Connection] = [:]
    var fragments: [FragmentKey: Reassembly] = [:]
    var handles: [String: [UInt16: BluetoothUUID]] = [:]
    var events: [CaptureEvent] = []
    var firstTimestamp: Int64?
    var now = Timestamp(monotonic: .zero, wallMicroseconds: 0)
    var currentRecord = 0

    init(datalink: Btsnoop.Datalink, options: BtsnoopImportOptions) {
        self.datalink = datalink
        self.options = options
        report.datalink = datalink.rawValue
    }

    mutating func classify(_ records: [Int], _ category: BtsnoopReport.Category, _ reason: String? = nil) {
        for record in records {
            report.counts[category, default: 0] += 1
            if category == .unknown || category == .damaged, report.problems.count < BtsnoopReport.problemLimit {
                report.problems.append(BtsnoopReport.Problem(record: record, reason: reason ?? category.rawValue))
            }
        }
    }

    mutating func process(_ record: Btsnoop.Record) {
        report.records += 1
        currentRecord = record.number
        let first = firstTimestamp ?? record.timestamp
        firstTimestamp = first
        // Since the first record, kept within what a trace line holds (±292 years in nanoseconds).
        let limit = Int64.max / 1000
        let elapsed = min(max(record.timestamp.subtractingReportingOverflow(first).partialValue, -limit), limit)
        now = Timestamp(monotonic: .microseconds(elapsed), wallMicroseconds: record.wallMicroseconds)
        guard record.originalLength == UInt32(record.data.count) else {
            classify(
                [record.number], .damaged,
                "cut short in the capture (\(record.data.count) of \(record.originalLength) bytes)")
            return
        }
        guard TraceLineCodec.wallMicroseconds.contains(record.wallMicroseconds) else {
            return classify([record.number], .damaged, "its time is outside 0001-01-01 to 9999-12-31 UTC")
        }
        switch datalink {
        case .hciUART:
            var cursor = ByteCursor(record.data)
            guard let type = cursor.readUInt8() else { return classify([record.number], .damaged, "empty record") }
            let incoming = record.flags & 1 == 1
            switch type {
            case 0x01, 0x03, 0x05: classify([record.number], .hci)
            case 0x02: acl(cursor.rest(), index: 0, incoming: incoming)
            case 0x04: event(cursor.rest(), index: 0)
            default: classify([record.number], .unknown, "H4 packet type 0x\(hex(type))")
            }
        case .hciUnencapsulated:
            let incoming = record.flags & 1 == 1
            if record.flags & 2 != 0 {
                if incoming { event(record.data, index: 0) } else { classify([record.number], .hci) }
            } else {
                acl(record.data, index: 0, incoming: incoming)
            }
        case .linuxMonitor:
            let index = UInt16(truncatingIfNeeded: record.flags >> 16)
            switch record.flags & 0xFFFF {
            case 0:  // New Index: type, bus, address, name
                var cursor = ByteCursor(record.data)
                guard cursor.take(2) != nil, let address = cursor.take(6) else {
                    return classify([record.number], .damaged, "New Index cut short")
                }
                adapters[index] = Self.address(address)
                classify([record.number], .hci)
            case 3: event(record.data, index: index)
            case 4: acl(record.data, index: index, incoming: false)
            case 5: acl(record.data, index: index, incoming: true)
            case 1, 2, 6...19: classify([record.number], .hci)
            case let opcode: classify([record.number], .unknown, "monitor opcode \(opcode)")
            }
        }
    }

    // MARK: HCI events

    mutating func event(_ data: ArraySlice<UInt8>, index: UInt16) {
        let number = currentRecord
        var cursor = ByteCursor(data)
        guard let code = cursor.readUInt8(), let length = cursor.readUInt8(), let parameters = cursor.take(Int(length))
        else {
            return classify([number], .damaged, "HCI event cut short")
        }
        var fields = ByteCursor(parameters)
        switch code {
        case 0x3E:  // LE Meta
            let sub = fields.readUInt8()
            if sub == 0x01 || sub == 0x0A || sub == 0x29 {  // LE (Enhanced) Connection Complete
                guard let status = fields.readUInt8(), let handle = fields.readUInt16(.little), fields.take(2) != nil,
                    let peer = fields.take(6)
                else { return classify([number], .damaged, "LE Connection Complete cut short") }
                if status == 0 { connected(ConnectionKey(index: index, handle: handle & 0x0FFF), Self.address(peer)) }
            }
        case 0x03:  // Connection Complete (BR/EDR)
            guard let status = fields.readUInt8(), let handle = fields.readUInt16(.little), let peer = fields.take(6)
            else {
                return classify([number], .damaged, "Connection Complete cut short")
            }
            if status == 0 { connected(ConnectionKey(index: index, handle: handle & 0x0FFF), Self.address(peer)) }
        case 0x05:  // Disconnection Complete
            guard let status = fields.readUInt8(), let handle = fields.readUInt16(.little) else {
                return classify([number], .damaged, "Disconnection Complete cut short")
            }
            let key = ConnectionKey(index: index, handle: handle & 0x0FFF)
            if status == 0, let connection = connections[key] {
                events.append(.connection(TraceConnection(address: connection.address, connected: false, at: now)))
                report.connectionEvents += 1
                connections[key] = nil
                for incoming in [false, true] {
                    if let left = fragments.removeValue(forKey: FragmentKey(connection: key, incoming: incoming)) {
                        classify(left.records, .damaged, "L2CAP PDU cut short by the disconnection")
                    }
                }
            }
        case 0x0E:  // Command Complete: Read BD_ADDR gives the adapter's address
            if fields.readUInt8() != nil, fields.readUInt16(.little) == 0x1009, fields.readUInt8() == 0,
                let address = fields.take(6)
            {
                adapters[index] = Self.address(address)
            }
        default:
            break
        }
        classify([number], .hci)
    }

    mutating func connected(_ key: ConnectionKey, _ address: String) {
        connections[key] = Connection(address: address)
        events.append(.connection(TraceConnection(address: address, connected: true, at: now)))
        report.connectionEvents += 1
    }

    // MARK: ACL and L2CAP

    mutating func acl(_ data: ArraySlice<UInt8>, index: UInt16, incoming: Bool) {
        let number = currentRecord
        var cursor = ByteCursor(data)
        guard let header = cursor.readUInt16(.little), let length = cursor.readUInt16(.little),
            let payload = cursor.take(Int(length))
        else {
            return classify([number], .damaged, "ACL packet cut short")
        }
        let connection = ConnectionKey(index: index, handle: header & 0x0FFF)
        let key = FragmentKey(connection: connection, incoming: incoming)
        let boundary = (header >> 12) & 0x3
        var assembly: Reassembly
        if boundary == 0x1 {
            guard var started = fragments[key] else {
                return classify([number], .damaged, "ACL continuation without its start")
            }
            started.data += payload
            started.records.append(number)
            assembly = started
        } else {
            if let left = fragments.removeValue(forKey: key) {
                classify(left.records, .damaged, "L2CAP PDU never completed (a new one started)")
            }
            assembly = Reassembly(data: Array(payload), records: [number])
        }
        var pdu = ByteCursor(assembly.data)
        guard let l2capLength = pdu.readUInt16(.little), let channel = pdu.readUInt16(.little) else {
            fragments[key] = assembly
            return
        }
        let expected = Int(l2capLength)
        if pdu.remaining < expected {
            fragments[key] = assembly
            return
        }
        fragments[key] = nil
        guard pdu.remaining == expected, let body = pdu.take(expected) else {
            return classify(assembly.records, .damaged, "ACL data longer than its L2CAP length")
        }
        let category: BtsnoopReport.Category
        let reason: String?
        if channel == 0x0004 {
            (category, reason) = att(body, connection: connection, incoming: incoming)
        } else {
            (category, reason) = (.l2cap, nil)
        }
        classify(assembly.records, category, reason)
    }

    // MARK: ATT

    /// One ATT PDU. The capturing host is the client: requests go out, responses and notifications come in.
    mutating func att(
        _ pdu: ArraySlice<UInt8>, connection key: ConnectionKey, incoming: Bool
    ) -> (BtsnoopReport.Category, String?) {
        var cursor = ByteCursor(pdu)
        guard let opcode = cursor.readUInt8() else { return (.damaged, "empty ATT PDU") }
        var connection =
            connections[key] ?? Connection(address: options.address ?? Self.syntheticAddress(key))
        defer { connections[key] = connection }
        if !incoming {
            switch opcode {
            case 0x0A:  // Read Request
                guard let handle = cursor.readUInt16(.little) else { return (.damaged, "ATT Read Request cut short") }
                connection.pending = .read(handle)
                return (.att, nil)
            case 0x0C:  // Read Blob Request
                guard let handle = cursor.readUInt16(.little), let offset = cursor.readUInt16(.little) else {
                    return (.damaged, "ATT Read Blob Request cut short")
                }
                connection.pending = .readBlob(handle, offset: offset)
                return (.att, nil)
            case 0x08:  // Read By Type Request
                guard cursor.readUInt16(.little) != nil, cursor.readUInt16(.little) != nil,
                    let type = Self.uuid(cursor.rest())
                else {
                    return (.damaged, "ATT Read By Type Request malformed")
                }
                connection.pending = .readByType(type)
                return (.discovery, nil)
            case 0x04, 0x06, 0x10:
                connection.pending = .other
                return (.discovery, nil)
            case 0x02, 0x12, 0x16, 0x18, 0x0E, 0x20:
                connection.pending = .other
                return (.att, nil)
            default:
                return (.att, nil)  // commands, confirmations, our own server's answers
            }
        }
        switch opcode {
        case 0x1B, 0x1D:  // Handle Value Notification / Indication
            guard let handle = cursor.readUInt16(.little) else { return (.damaged, "ATT notification cut short") }
            let kind: TraceValue.Kind = opcode == 0x1B ? .notification : .indication
            events.append(
                .value(
                    ValueEvent(
                        kind: kind, address: connection.address, handle: handle, bytes: Array(cursor.rest()),
                        at: now)))
            return (.value, nil)
        case 0x0B:  // Read Response
            guard case .read(let handle)? = connection.pending else { return (.att, nil) }
            connection.pending = nil
            connection.lastRead[handle] = events.count
            events.append(
                .value(
                    ValueEvent(
                        kind: .read, address: connection.address, handle: handle, bytes: Array(cursor.rest()),
                        at: now)))
            return (.value, nil)
        case 0x0D:  // Read Blob Response: the next part of a long value
            guard case .readBlob(let handle, let offset)? = connection.pending else { return (.att, nil) }
            connection.pending = nil
            if offset > 0, let position = connection.lastRead[handle], case .value(var event) = events[position] {
                event.bytes += cursor.rest()
                events[position] = .value(event)
            } else {
                connection.lastRead[handle] = events.count
                events.append(
                    .value(
                        ValueEvent(
                            kind: .read, address: connection.address, handle: handle, bytes: Array(cursor.rest()),
                            at: now)))
            }
            return (.value, nil)
        case 0x09:  // Read By Type Response
            guard case .readByType(let type)? = connection.pending else { return (.discovery, nil) }
            connection.pending = nil
            guard let length = cursor.readUInt8(), length >= 2 else {
                return (.damaged, "ATT Read By Type Response malformed")
            }
            while !cursor.isAtEnd {
                guard var entry = cursor.take(Int(length)).map({ ByteCursor($0) }),
                    let handle = entry.readUInt16(.little)
                else {
                    return (.damaged, "ATT Read By Type Response entry cut short")
                }
                if type == BluetoothUUID(UInt16(0x2803)) {
                    guard entry.readUInt8() != nil, let valueHandle = entry.readUInt16(.little),
                        let uuid = Self.uuid(entry.rest())
                    else {
                        return (.damaged, "characteristic declaration malformed")
                    }
                    learn(connection.address, valueHandle, uuid)
                } else if !Self.isDeclaration(type) {
                    // Reading by UUID: each entry is a value of that characteristic.
                    learn(connection.address, handle, type)
                    events.append(
                        .value(
                            ValueEvent(
                                kind: .read, address: connection.address, handle: handle, bytes: Array(entry.rest()),
                                at: now)))
                }
            }
            return (.discovery, nil)
        case 0x05:  // Find Information Response
            connection.pending = nil
            guard let format = cursor.readUInt8(), format == 1 || format == 2 else {
                return (.damaged, "ATT Find Information Response malformed")
            }
            let width = format == 1 ? 2 : 16
            while !cursor.isAtEnd {
                guard let handle = cursor.readUInt16(.little), let raw = cursor.take(width), let uuid = Self.uuid(raw)
                else {
                    return (.damaged, "ATT Find Information Response entry cut short")
                }
                if !Self.isDeclaration(uuid), !Self.isDescriptor(uuid) { learn(connection.address, handle, uuid) }
            }
            return (.discovery, nil)
        case 0x07, 0x11:
            connection.pending = nil
            return (.discovery, nil)
        case 0x01, 0x03, 0x13, 0x17, 0x19, 0x0F, 0x21:
            connection.pending = nil
            return (.att, nil)
        default:
            return (.att, nil)  // requests from the remote to the capturing host's own server, commands
        }
    }

    mutating func learn(_ address: String, _ handle: UInt16, _ uuid: BluetoothUUID) {
        if handles[address]?[handle] == nil { report.discoveredHandles += 1 }
        handles[address, default: [:]][handle] = uuid
    }

    // MARK: The result

    mutating func finish() -> BtsnoopImport {
        for (_, left) in fragments.sorted(by: { $0.value.records[0] < $1.value.records[0] }) {
            classify(left.records, .damaged, "L2CAP PDU cut short at the end of the capture")
        }
        fragments = [:]
        var sensors: [String: TraceSensor] = [:]
        var order: [String] = []
        var body: [TraceRecord] = []
        func sensor(_ address: String, at: Timestamp) {
            guard sensors[address] == nil else { return }
            order.append(address)
            let adapter = connections.first { $0.value.address == address }.flatMap { adapters[$0.key.index] }
            sensors[address] = TraceSensor(address: address, adapter: adapter ?? adapters.values.first, at: at)
        }
        for event in events {
            switch event {
            case .connection(let connection):
                sensor(connection.address, at: connection.at)
                body.append(.connection(connection))
            case .value(let value):
                guard let uuid = options.handleMap[value.handle] ?? handles[value.address]?[value.handle] else {
                    report.unmappedHandles[value.handle, default: 0] += 1
                    continue
                }
                sensor(value.address, at: value.at)
                switch value.kind {
                case .notification:
                    report.notifications += 1
                    if !(sensors[value.address]?.characteristics.contains(uuid) ?? true) {
                        sensors[value.address]?.characteristics.append(uuid)
                    }
                case .indication:
                    report.indications += 1
                    if !(sensors[value.address]?.characteristics.contains(uuid) ?? true) {
                        sensors[value.address]?.characteristics.append(uuid)
                    }
                case .read:
                    report.reads += 1
                    sensors[value.address]?.apply(read: value.bytes, of: uuid)
                }
                body.append(
                    .value(
                        TraceValue(
                            kind: value.kind, address: value.address, characteristic: uuid, bytes: value.bytes,
                            at: value.at)))
            }
        }
        report.problems.sort { $0.record < $1.record }
        report.devices = order
        report.handles = handles
        let created = firstTimestamp.map { $0 &- Btsnoop.epochOffsetMicroseconds }
        let header = TraceHeader(
            createdWallMicroseconds: created, recorder: options.recorder, origin: options.origin)
        let records = [.header(header)] + order.compactMap { sensors[$0].map(TraceRecord.sensor) } + body
        return BtsnoopImport(records: records, report: report)
    }

    // MARK: Helpers

    /// `AA:BB:CC:DD:EE:FF` from HCI's little-endian 6 bytes.
    static func address(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.reversed().map { hex($0).uppercased() }.joined(separator: ":")
    }

    static func syntheticAddress(_ key: ConnectionKey) -> String {
        let parts: [UInt8] = [
            0, 0, UInt8(truncatingIfNeeded: key.index), 0, UInt8(key.handle >> 8), UInt8(key.handle & 0xFF),
        ]
        return parts.map { hex($0).uppercased() }.joined(separator: ":")
    }

    /// A 16- or 128-bit UUID in ATT's little-endian order.
    static func uuid(_ bytes: ArraySlice<UInt8>) -> BluetoothUUID? {
        var cursor = ByteCursor(bytes)
        switch bytes.count {
        case 2:
            return cursor.readUInt16(.little).map { BluetoothUUID($0) }
        case 16:
            guard let low = cursor.readUInt64(.little), let high = cursor.readUInt64(.little) else { return nil }
            return BluetoothUUID(high: high, low: low)
        default:
            return nil
        }
    }

    /// Primary/secondary service, include and characteristic declarations (0x2800-0x2803).
    static func isDeclaration(_ uuid: BluetoothUUID) -> Bool {
        guard let short = uuid.shortValue else { return false }
        return (0x2800...0x2803).contains(short)
    }

    static func isDescriptor(_ uuid: BluetoothUUID) -> Bool {
        guard let short = uuid.shortValue else { return false }
        return (0x2900...0x29FF).contains(short)
    }
}

private func hex(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return byte < 0x10 ? "0" + text : text
}

extension TraceSensor {
    /// Takes what a read of `uuid` says about the device (Device Information, name, locations).
    mutating func apply(read bytes: [UInt8], of uuid: BluetoothUUID) {
        let text: String? = {
            let string = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return string.isEmpty ? nil : string
        }()
        switch uuid {
        case .manufacturerNameString: manufacturer = text ?? manufacturer
        case .modelNumberString: model = text ?? model
        case .serialNumberString: serialNumber = text ?? serialNumber
        case .hardwareRevisionString: hardwareRevision = text ?? hardwareRevision
        case .firmwareRevisionString: firmwareRevision = text ?? firmwareRevision
        case .softwareRevisionString: softwareRevision = text ?? softwareRevision
        case BluetoothUUID(UInt16(0x2A00)): name = text ?? name
        case .bodySensorLocation: bodySensorLocation = bytes.first ?? bodySensorLocation
        case .sensorLocation: sensorLocation = bytes.first ?? sensorLocation
        default: break
        }
    }
}
