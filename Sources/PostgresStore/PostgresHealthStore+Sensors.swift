import Foundation
public import Health
internal import StoreEngine
internal import Support

/// The sensor registry: sensors in the `sensors` table, their version in the `registry` counter (bumped in the
/// same transaction as each change), statuses in `sensor_status`, committed asynchronously (a crash of the server
/// loses at most the last few reports, which the next one replaces anyway).
extension PostgresHealthStore: SensorRegistry {
    public func register(_ sensor: RegisteredSensor) throws {
        var sensor = sensor
        sensor.address = try SensorRegistryColumns.address(sensor.address)
        if let adapter = sensor.adapter { sensor.adapter = try SensorRegistryColumns.address(adapter) }
        try writeTransaction { connection in
            let existing = try connection.query(
                "SELECT \(SensorRegistryColumns.selectList) FROM sensors WHERE address = $1", [sensor.address])
            if existing.count > 0, try Self.readSensor(existing, 0) == sensor { return }
            try connection.query(
                """
                INSERT INTO sensors (address, adapter, name, label, subject, location, device, services, paired,
                    notify_mode, enrolled_ms)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                ON CONFLICT (address) DO UPDATE SET adapter = excluded.adapter, name = excluded.name,
                    label = excluded.label, subject = excluded.subject, location = excluded.location,
                    device = excluded.device, services = excluded.services, paired = excluded.paired,
                    notify_mode = excluded.notify_mode, enrolled_ms = excluded.enrolled_ms
                """,
                [
                    sensor.address, sensor.adapter, sensor.name, sensor.label, sensor.subject, sensor.location,
                    try sensor.device.map { try SensorRegistryColumns.json($0) },
                    try SensorRegistryColumns.json(sensor.services),
                    sensor.paired ? "true" : "false", sensor.notifyMode.rawValue, "\(sensor.enrolledAt.milliseconds)",
                ])
            try connection.query("UPDATE counters SET value = value + 1 WHERE name = 'registry'")
        }
    }

    public func registeredSensors() throws -> [RegisteredSensor] {
        try withConnection { connection in
            let rows = try connection.query("SELECT \(SensorRegistryColumns.selectList) FROM sensors ORDER BY address")
            return try (0..<rows.count).map { try Self.readSensor(rows, $0) }
        }
    }

    public func forgetSensor(_ address: String) throws -> Bool {
        let address = try SensorRegistryColumns.address(address)
        return try writeTransaction { connection in
            let deleted = try connection.query("DELETE FROM sensors WHERE address = $1", [address]).affected
            try connection.query("DELETE FROM sensor_status WHERE address = $1", [address])
            guard deleted > 0 else { return false }
            try connection.query("UPDATE counters SET value = value + 1 WHERE name = 'registry'")
            return true
        }
    }

    public func updateStatus(_ statuses: [SensorStatus]) throws {
        guard !statuses.isEmpty else { return }
        let addresses = try statuses.map { try SensorRegistryColumns.address($0.address) }
        try withConnection { connection in
            // One statement, so one (asynchronous) commit, and no write lock: statuses never wait for samples.
            func column<Value>(_ value: (SensorStatus) -> Value?, _ text: (Value) -> String) -> String? {
                PostgresText.nullableArray(statuses.map { value($0).map(text) })
            }
            try connection.query(
                """
                INSERT INTO sensor_status (address, state, battery, last_sample_ms, notifications, samples, malformed,
                    dropped, reconnects, updated_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[], $5::bigint[], $6::bigint[],
                    $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
                ON CONFLICT (address) DO UPDATE SET state = excluded.state, battery = excluded.battery,
                    last_sample_ms = excluded.last_sample_ms, notifications = excluded.notifications,
                    samples = excluded.samples, malformed = excluded.malformed, dropped = excluded.dropped,
                    reconnects = excluded.reconnects, updated_ms = excluded.updated_ms
                """,
                [
                    PostgresText.array(addresses), column(\.state) { $0 }, column(\.batteryPercent) { "\($0)" },
                    column(\.lastSampleAt) { "\($0.milliseconds)" }, column(\.notifications) { "\($0)" },
                    column(\.samples) { "\($0)" }, column(\.malformed) { "\($0)" }, column(\.dropped) { "\($0)" },
                    column(\.reconnects) { "\($0)" }, column(\.updatedAt) { "\($0.milliseconds)" },
                ])
        }
    }

    public func sensorStatuses() throws -> [SensorStatus] {
        try withConnection { connection in
            let rows = try connection.query(
                """
                SELECT address, state, battery, last_sample_ms, notifications, samples, malformed, dropped, reconnects,
                    updated_ms
                FROM sensor_status ORDER BY address
                """)
            return (0..<rows.count).map { row in
                SensorStatus(
                    address: rows.text(row, 0) ?? "", state: rows.text(row, 1) ?? "",
                    batteryPercent: rows.optionalInt64(row, 2).map { Int(clamping: $0) },
                    lastSampleAt: rows.optionalInt64(row, 3).map(Instant.init(milliseconds:)),
                    notifications: rows.int64(row, 4), samples: rows.int64(row, 5), malformed: rows.int64(row, 6),
                    dropped: rows.int64(row, 7), reconnects: rows.int64(row, 8),
                    updatedAt: Instant(milliseconds: rows.int64(row, 9)))
            }
        }
    }

    public func registryVersion() throws -> Int64 {
        try withConnection { try $0.query("SELECT value FROM counters WHERE name = 'registry'").int64(0, 0) }
    }

    private static func readSensor(_ rows: PostgresRows, _ row: Int) throws -> RegisteredSensor {
        do {
            return try SensorRegistryColumns.sensor(
                address: rows.text(row, 0) ?? "", adapter: rows.text(row, 1), name: rows.text(row, 2),
                label: rows.text(row, 3), subject: rows.text(row, 4), location: rows.text(row, 5),
                device: rows.text(row, 6), services: rows.text(row, 7), paired: rows.bool(row, 8),
                notifyMode: rows.text(row, 9), enrolledAt: rows.int64(row, 10))
        } catch {
            throw PostgresError(code: .unexpected, message: error.description)
        }
    }
}
