// The fuzz target over every GATT decoder (`make fuzz`; Fuzz/FuzzerEntry.swift calls it). Built together with the
// GATT and Traces sources into one module (swiftc -sanitize=fuzzer,address), so it sees the module's internals.
//
// Input layout: byte 0 picks the characteristic (modulo the catalog size), the rest is the value.
// Besides "never traps", it checks two properties on every input:
//   - a value that decodes re-encodes to bytes that decode to an equal value;
//   - a value that fails names an offset inside (or just past the end of) the input.
// Selector 0xFF instead exercises the text parsers (Hex, BluetoothUUID) and the CSC delta helper.

func fuzzGATT(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    let payload = Array(input.dropFirst())
    if selector == 0xFF {
        fuzzTextAndDeltas(payload)
        return
    }
    let types = CharacteristicCatalog.all
    checkRoundTrip(types[Int(selector) % types.count], payload)
}

private func checkRoundTrip(_ type: any CharacteristicValue.Type, _ payload: [UInt8]) {
    checkRoundTrip(payload, as: type)
}

private func checkRoundTrip<Value: CharacteristicValue>(_ payload: [UInt8], as type: Value.Type) {
    do throws(DecodeError) {
        let value = try Value(decoding: payload)
        _ = FieldValue.object(value.fields).json
        let again = try Value(decoding: value.encoded())
        precondition(again == value, "\(Value.name): re-encoding \(Hex.string(payload)) changed the value")
    } catch {
        precondition(error.offset >= 0 && error.offset <= payload.count, "\(Value.name): offset out of bounds")
        _ = error.description
    }
}

private func fuzzTextAndDeltas(_ payload: [UInt8]) {
    let text = String(decoding: payload, as: UTF8.self)
    if let bytes = try? Hex.bytes(text) {
        precondition((try? Hex.bytes(Hex.string(bytes))) == bytes, "hex round trip")
    }
    if let uuid = BluetoothUUID(text) {
        precondition(BluetoothUUID(uuid.description) == uuid, "uuid round trip")
    }
    let half = payload.count / 2
    if let first = try? CSCMeasurement(decoding: Array(payload.prefix(half))),
        let second = try? CSCMeasurement(decoding: Array(payload.dropFirst(half)))
    {
        let delta = second.delta(since: first)
        _ = delta.crankCadence
        _ = delta.wheelRevolutionsPerSecond
    }
}
