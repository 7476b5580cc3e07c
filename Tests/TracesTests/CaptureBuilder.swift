import GATT
import Traces

/// Builds btsnoop captures the way a controller and bluetoothd would produce them: HCI events, ACL packets split
/// into fragments, ATT PDUs on channel 4. H4 (Android) or the Linux monitor (btmon).
struct CaptureBuilder {
    let datalink: Btsnoop.Datalink
    var writer: BtsnoopWriter
    var wall: Int64 = 1_795_946_400_000_000
    var index: UInt16 = 0
    var records = 0

    init(_ datalink: Btsnoop.Datalink) {
        self.datalink = datalink
        writer = BtsnoopWriter(datalink: datalink)
    }

    var bytes: [UInt8] { writer.bytes }

    mutating func advance(milliseconds: Int64) { wall += milliseconds * 1000 }

    /// A raw record.
    mutating func record(_ data: [UInt8], flags: UInt32, originalLength: UInt32? = nil) {
        writer.append(data, flags: flags, wallMicroseconds: wall, originalLength: originalLength)
        records += 1
    }

    mutating func command(_ opcode: UInt16, _ parameters: [UInt8] = []) {
        let packet = le16(opcode) + [UInt8(parameters.count)] + parameters
        switch datalink {
        case .hciUART: record([0x01] + packet, flags: 2)
        case .hciUnencapsulated: record(packet, flags: 2)
        case .linuxMonitor: record(packet, flags: UInt32(index) << 16 | 2)
        }
    }

    mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        let packet = [code, UInt8(parameters.count)] + parameters
        switch datalink {
        case .hciUART: record([0x04] + packet, flags: 3)
        case .hciUnencapsulated: record(packet, flags: 3)
        case .linuxMonitor: record(packet, flags: UInt32(index) << 16 | 3)
        }
    }

    /// Monitor New Index: the adapter's address.
    mutating func newIndex(address: String) {
        record([0x00, 0x01] + Self.address(address) + Array("hci0\0\0\0\0".utf8), flags: UInt32(index) << 16)
    }

    /// LE (Enhanced) Connection Complete.
    mutating func connect(handle: UInt16, address: String, enhanced: Bool = false) {
        var parameters: [UInt8] = [enhanced ? 0x0A : 0x01, 0x00] + le16(handle) + [0x00, 0x00] + Self.address(address)
        if enhanced { parameters += [UInt8](repeating: 0, count: 12) }
        parameters += [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00]
        event(0x3E, parameters)
    }

    mutating func disconnect(handle: UInt16) {
        event(0x05, [0x00] + le16(handle) + [0x13])
    }

    /// An L2CAP PDU as ACL packets of at most `fragment` bytes each.
    mutating func l2cap(handle: UInt16, incoming: Bool, channel: UInt16, _ payload: [UInt8], fragment: Int = 27) {
        let pdu = le16(UInt16(payload.count)) + le16(channel) + payload
        var offset = 0
        while offset < pdu.count {
            let piece = Array(pdu[offset..<min(pdu.count, offset + fragment)])
            let boundary: UInt16 = offset == 0 ? (incoming ? 0x2 : 0x0) : 0x1
            acl(handle | boundary << 12, piece, incoming: incoming)
            offset += piece.count
        }
    }

    mutating func acl(_ header: UInt16, _ data: [UInt8], incoming: Bool) {
        let packet = le16(header) + le16(UInt16(data.count)) + data
        switch datalink {
        case .hciUART: record([0x02] + packet, flags: incoming ? 1 : 0)
        case .hciUnencapsulated: record(packet, flags: incoming ? 1 : 0)
        case .linuxMonitor: record(packet, flags: UInt32(index) << 16 | (incoming ? 5 : 4))
        }
    }

    mutating func att(handle: UInt16, incoming: Bool, _ pdu: [UInt8], fragment: Int = 27) {
        l2cap(handle: handle, incoming: incoming, channel: 4, pdu, fragment: fragment)
    }

    /// Discovery of characteristic declarations: one Read By Type request and its response.
    mutating func discoverCharacteristics(handle: UInt16, _ declarations: [(UInt16, BluetoothUUID)]) {
        att(handle: handle, incoming: false, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
        for group in [declarations.filter { $0.1.shortValue != nil }, declarations.filter { $0.1.shortValue == nil }]
        where !group.isEmpty {
            let long = group[0].1.shortValue == nil
            var response: [UInt8] = [0x09, long ? 21 : 7]
            for (valueHandle, uuid) in group {
                response += le16(valueHandle - 1) + [0x12] + le16(valueHandle) + Self.uuidBytes(uuid)
            }
            att(handle: handle, incoming: true, response, fragment: 251)
            att(handle: handle, incoming: false, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
        }
        att(handle: handle, incoming: true, [0x01, 0x08, 0x01, 0x00, 0x0A])
    }

    mutating func read(handle: UInt16, attribute: UInt16, _ value: [UInt8]) {
        att(handle: handle, incoming: false, [0x0A] + le16(attribute))
        att(handle: handle, incoming: true, [0x0B] + value)
    }

    /// A long read: Read, then Read Blob for the rest (MTU 23: 22 bytes a response).
    mutating func longRead(handle: UInt16, attribute: UInt16, _ value: [UInt8]) {
        read(handle: handle, attribute: attribute, Array(value.prefix(22)))
        var offset = 22
        while offset < value.count {
            att(handle: handle, incoming: false, [0x0C] + le16(attribute) + le16(UInt16(offset)))
            att(handle: handle, incoming: true, [0x0D] + Array(value[offset..<min(value.count, offset + 22)]))
            offset += 22
        }
    }

    mutating func notify(handle: UInt16, attribute: UInt16, _ value: [UInt8], fragment: Int = 27) {
        att(handle: handle, incoming: true, [0x1B] + le16(attribute) + value, fragment: fragment)
    }

    static func address(_ text: String) -> [UInt8] {
        text.split(separator: ":").compactMap { UInt8($0, radix: 16) }.reversed()
    }

    static func uuidBytes(_ uuid: BluetoothUUID) -> [UInt8] {
        if let short = uuid.shortValue { return le16(short) }
        var bytes: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: uuid.high >> shift))
        }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: uuid.low >> shift)) }
        return bytes.reversed()
    }
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
