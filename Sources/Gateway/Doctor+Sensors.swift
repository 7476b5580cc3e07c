import GATT
import Health

extension Doctor {
    /// The services whose devices, in practice, send only to a bonded collector: a glucose meter keeps its records
    /// for the collector it bonded with, and most cuffs refuse to indicate a result over an unpaired link.
    static let bondingServices: [(service: BluetoothUUID, device: String)] = [
        (.glucoseService, "glucose meter"), (.bloodPressureService, "blood pressure cuff"),
    ]

    /// One finding per enrolled device that needs bonding: bonded, or not (nothing will arrive, and why). Whether it
    /// is bonded is bluetoothd's answer when it gave one (`peripherals`), else what the registry recorded at `pair`.
    static func bondingFindings(sensors: [RegisteredSensor], peripherals: [PeripheralInfo]?) -> [DoctorFinding] {
        sensors.sorted { $0.address < $1.address }.compactMap { sensor in
            let offered = Set(sensor.services.compactMap { BluetoothUUID($0) })
            guard let kind = bondingServices.first(where: { offered.contains($0.service) })?.device else { return nil }
            let name = "sensor \(sensor.address)" + (sensor.label.map { " (\($0))" } ?? "")
            let known = peripherals?.filter { $0.id.address == sensor.address }
            if let known, known.isEmpty {
                return .warning(
                    "bonding",
                    "\(name) is a \(kind), and bluetoothd does not know it (its bond was removed, or it was paired "
                        + "through another controller): a \(kind) sends its readings only to a bonded collector",
                    fix: "Put it in pairing mode and run: wearhouse pair \(sensor.address)")
            }
            let bonded = known.map { $0.contains { $0.paired } } ?? sensor.paired
            guard bonded else {
                return .warning(
                    "bonding",
                    "\(name) is a \(kind) that is not bonded: a \(kind) sends its readings only to a bonded "
                        + "collector, so none will arrive",
                    fix: "Put it in pairing mode and run: wearhouse pair \(sensor.address)")
            }
            return .ok("bonding", "\(name) is a \(kind) and is bonded")
        }
    }
}
