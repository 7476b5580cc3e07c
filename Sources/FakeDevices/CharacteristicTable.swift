import GATT

/// Builds the characteristics a resolution finds, with BlueZ-shaped object paths as handles
/// (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0001/char0002`). Handles follow the ATT layout: a service
/// declaration, then per characteristic a declaration and a value, plus a CCCD when it can notify or
/// indicate. So the same services always give the same handles, and reordered services give new ones.
enum CharacteristicTable {
    static func build(services: [ServiceDefinition], adapterName: String, address: String) -> [CharacteristicInfo] {
        let device = "/org/bluez/\(adapterName)/dev_" + address.uppercased().replacingColons()
        var handle: UInt64 = 1
        var table: [CharacteristicInfo] = []
        for service in services {
            let servicePath = device + "/service" + hex4(handle)
            handle += 1
            for characteristic in service.characteristics {
                table.append(
                    CharacteristicInfo(
                        uuid: characteristic.uuid, service: service.uuid, properties: characteristic.properties,
                        handle: servicePath + "/char" + hex4(handle)))
                handle += 2
                if !characteristic.properties.isDisjoint(with: [.notify, .indicate]) { handle += 1 }
            }
        }
        return table
    }
}

/// `%04x`, as BlueZ prints handles.
private func hex4(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

extension String {
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
