import Foundation
public import Health
internal import StoreEngine
internal import Support

/// The sensor registry: sensors in the store's `sensors` table, their version in the `registry` counter (bumped
/// in the same transaction as each change), statuses in the side file.
///
/// Why a counter and not `PRAGMA data_version`: that pragma moves on every commit of another connection to the
/// file, so a gateway writing samples would see it change every second, and it never moves for the
/// connection's own commits; the counter moves exactly when the registry does, whoever changed it.
///
/// Why statuses live in the side file (`<store>-access`): they are rewritten every few seconds, so in the
/// store's file they would queue behind (and hold up) the write transactions of samples, and each would cost a
/// durable commit. In the side file they commit with `synchronous=NORMAL`: no fsync, and a power cut loses at
/// most the last few reports, which the next one replaces anyway.
extension SQLiteHealthStore: SensorRegistry {
    public func register(_ sensor: RegisteredSensor) throws {
        defer { connection.resetCachedStatements() }
        var sensor = sensor
        sensor.address = try SensorRegistryColumns.address(sensor.address)
        if let adapter = sensor.adapter { sensor.adapter = try SensorRegistryColumns.address(adapter) }
        try connection.transaction {
            let existing = try connection.cached(
                "SELECT \(SensorRegistryColumns.selectList) FROM sensors WHERE address = ?1")
            try existing.bind(1, sensor.address)
            if try existing.step(), try Self.readSensor(existing) == sensor { return }
            existing.reset()
            let insert = try connection.cached(
                """
                INSERT OR REPLACE INTO sensors (address, adapter, name, label, subject, location, device, services,
                    paired, notify_mode, enrolled_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """)
            try insert.bind(1, sensor.address)
            try insert.bind(2, sensor.adapter)
            try insert.bind(3, sensor.name)
            try insert.bind(4, sensor.label)
            try insert.bind(5, sensor.subject)
            try insert.bind(6, sensor.location)
            try insert.bind(7, try sensor.device.map { try SensorRegistryColumns.json($0) })
            try insert.bind(8, try SensorRegistryColumns.json(sensor.services))
            try insert.bind(9, Int64(sensor.paired ? 1 : 0))
            try insert.bind(10, sensor.notifyMode.rawValue)
            try insert.bind(11, sensor.enrolledAt.milliseconds)
            try insert.step()
            try bumpRegistryVersion()
        }
    }

    public func registeredSensors() throws -> [RegisteredSensor] {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(
            "SELECT \(SensorRegistryColumns.selectList) FROM sensors ORDER BY address")
        var sensors: [RegisteredSensor] = []
        while try statement.step() { sensors.append(try Self.readSensor(statement)) }
        return sensors
    }

    public func forgetSensor(_ address: String) throws -> Bool {
        defer {
            connection.resetCachedStatements()
            sideConnection?.resetCachedStatements()
        }
        let address = try SensorRegistryColumns.address(address)
        let existed = try connection.transaction {
            let delete = try connection.cached("DELETE FROM sensors WHERE address = ?1")
            try delete.bind(1, address)
            try delete.step()
            guard connection.changes > 0 else { return false }
            try bumpRegistryVersion()
            return true
        }
        // A separate file, so a separate transaction: a crash in between leaves a status without a sensor, which
        // the next forget (or nothing at all) cleans up.
        // Without a usable side file there is no status to clean up.
        guard let side = sideConnection else { return existed }
        let status = try side.cached("DELETE FROM sensor_status WHERE address = ?1")
        try status.bind(1, address)
        try status.step()
        return existed
    }

    public func updateStatus(_ statuses: [SensorStatus]) throws {
        defer { sideConnection?.resetCachedStatements() }
        guard !statuses.isEmpty else { return }
        let addresses = try statuses.map { try SensorRegistryColumns.address($0.address) }
        // Statuses are volatile: commit without an fsync (see the type's discussion), then restore.
        let side = try accessLogConnection
        try side.withoutSync {
            try side.transaction {
                let upsert = try side.cached(
                    """
                    INSERT OR REPLACE INTO sensor_status (address, state, battery, last_sample_ms, notifications, samples,
                        malformed, dropped, reconnects, updated_ms)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                    """)
                for (status, address) in zip(statuses, addresses) {
                    upsert.reset()
                    try upsert.bind(1, address)
                    try upsert.bind(2, status.state)
                    try upsert.bind(3, status.batteryPercent.map(Int64.init))
                    try upsert.bind(4, status.lastSampleAt?.milliseconds)
                    try upsert.bind(5, status.notifications)
                    try upsert.bind(6, status.samples)
                    try upsert.bind(7, status.malformed)
                    try upsert.bind(8, status.dropped)
                    try upsert.bind(9, status.reconnects)
                    try upsert.bind(10, status.updatedAt.milliseconds)
                    try upsert.step()
                }
            }
        }
    }

    public func sensorStatuses() throws -> [SensorStatus] {
        defer { sideConnection?.resetCachedStatements() }
        guard let statement = try statusStatement() else { return [] }
        var statuses: [SensorStatus] = []
        while try statement.step() {
            statuses.append(
                SensorStatus(
                    address: statement.text(0) ?? "", state: statement.text(1) ?? "",
                    batteryPercent: statement.optionalInt64(2).map { Int(clamping: $0) },
                    lastSampleAt: statement.optionalInt64(3).map(Instant.init(milliseconds:)),
                    notifications: statement.int64(4), samples: statement.int64(5), malformed: statement.int64(6),
                    dropped: statement.int64(7), reconnects: statement.int64(8),
                    updatedAt: Instant(milliseconds: statement.int64(9))))
        }
        return statuses
    }

    /// The side file's status query; `nil` when this user may only read the side file and SQLite cannot open it
    /// for reading (SQLITE_READONLY: a reader may not create its WAL index while no writer has it open, that is
    /// while the service is stopped; the statuses are the service's).
    private func statusStatement() throws -> SQLiteStatement? {
        do {
            return try accessLogConnection.cached(
                """
                SELECT address, state, battery, last_sample_ms, notifications, samples, malformed, dropped, reconnects,
                    updated_ms
                FROM sensor_status ORDER BY address
                """)
        } catch {
            if sideIsReadOnly, error.code & 0xff == 8 { return nil }
            throw error
        }
    }

    public func registryVersion() throws -> Int64 {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached("SELECT value FROM counters WHERE name = 'registry'")
        return try statement.step() ? statement.int64(0) : 0
    }

    private func bumpRegistryVersion() throws {
        let bump = try connection.cached("UPDATE counters SET value = value + 1 WHERE name = 'registry'")
        try bump.step()
    }

    private static func readSensor(_ statement: SQLiteStatement) throws -> RegisteredSensor {
        do {
            return try SensorRegistryColumns.sensor(
                address: statement.text(0) ?? "", adapter: statement.text(1), name: statement.text(2),
                label: statement.text(3), subject: statement.text(4), location: statement.text(5),
                device: statement.text(6), services: statement.text(7), paired: statement.int64(8) != 0,
                notifyMode: statement.text(9), enrolledAt: statement.int64(10))
        } catch {
            throw SQLiteError(code: 11, operation: "read", message: error.description)
        }
    }
}
