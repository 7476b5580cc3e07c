import Foundation
public import Health
import SQLiteStore

/// The samples of a Gadgetbridge database, read table by table and device by device as the store asks for them
/// (``next()`` returns batches of at most ``batchSamples``, for ``HealthStoreEngine/saveAll(as:_:)``): one
/// statement steps through one device's rows of one table in time order, so memory stays at one batch whatever
/// the database's size. The database is opened read only (``GadgetbridgeFile``).
///
/// A row's interval runs from its `TIMESTAMP` to the next row's (of the same device and table), or 60 s when
/// that is further than ``maximumGapSeconds`` or the row is the last. `STEPS` above 0 become `stepCount`
/// samples over it, a valid `HEART_RATE` a `heartRate` sample at the timestamp, and rows whose kind is a sleep
/// stage (``GadgetbridgeDatabase/Family``) `sleepAnalysis` samples, consecutive rows of the same stage merged
/// into one. Every sample's device is the row's `DEVICE` (name, manufacturer, model, MAC as local identifier,
/// firmware) and its source `Gadgetbridge`; its id is derived from that natural key, so importing the database
/// again (or a newer copy) stores only what is new. What is not imported (markers of no measurement, values out
/// of range, tables of families not mapped, other tables) is counted in ``notImported`` with the reason and the
/// first row.
///
/// The store's write transaction calls ``next()`` on its own executor, one call after the other, and the command
/// reads the rest only after the save returned: one user at a time, which the compiler cannot see through the
/// store's executor.
public final class GadgetbridgeReader: @unchecked Sendable {
    public static let batchSamples = 10_000
    public static let source = Source(identifier: "Gadgetbridge")
    /// The longest gap between two rows that is still one interval (longer gaps are missing data).
    public static let maximumGapSeconds: Int64 = 900
    /// A row's interval when the next row is further than ``maximumGapSeconds`` or there is none.
    public static let defaultIntervalSeconds: Int64 = 60
    /// Timestamps accepted: 2000-01-01 to 2100-01-01 (UTC, seconds).
    public static let validTimestamps: ClosedRange<Int64> = 946_684_800...4_102_444_800
    /// Heart rates accepted, in beats per minute; Gadgetbridge writes -1, 0 and 255 (and other values outside
    /// this range on some bands) when there was no measurement.
    public static let validHeartRates: ClosedRange<Int64> = 20...250
    /// Steps accepted per second of a row's interval.
    public static let maximumStepsPerSecond: Int64 = 10
    /// The longest merged sleep sample; a longer run of one stage is cut.
    public static let maximumSleepSeconds: Int64 = 86_400
    static let maximumDevices = 10_000
    static let maximumNameBytes = 256

    /// What was not imported, by what (`MI_BAND_ACTIVITY_SAMPLE HEART_RATE=255`, `table ALARM`): how many, why,
    /// and where the first is (`TIMESTAMP=1735689600 DEVICE_ID=1`, or empty for a whole table).
    public struct Skipped: Hashable, Sendable {
        public var count: Int
        public var reason: String
        public var first: String
    }

    /// A device of the `DEVICE` table.
    public struct DeviceRow: Hashable, Sendable {
        public var id: Int64
        public var device: Device
        /// Gadgetbridge's device type key (`DEVICE.TYPE`).
        public var type: Int64
        /// Gadgetbridge's device type name (`DEVICE.TYPE_NAME`, `MIBAND`), where the database has the column.
        public var typeName: String?
    }

    private struct Scan {
        var family: GadgetbridgeDatabase.Family
        /// The type of the table's `HEART_RATE` samples.
        var heartRateType: HealthType
        var deviceID: Int64
        var statement: SQLiteStatement?
    }

    private struct Row {
        var timestamp: Int64
        var steps: Int64?
        var heartRate: Int64?
        var stage: GadgetbridgeDatabase.SleepStage?
    }

    private struct SleepRun {
        var stage: GadgetbridgeDatabase.SleepStage
        var start: Int64
        var end: Int64
    }

    private let file: GadgetbridgeFile
    private let progress: (@Sendable (Double) -> Void)?
    private var pending: [Scan] = []
    private var current: Scan?
    private var previous: Row?
    private var run: SleepRun?
    private var overlayDone = false
    private var totalRows: Int64 = 0
    private var rowsRead: Int64 = 0
    private var shownPercent = -1

    /// The `sleepAnalysis` samples of source Gadgetbridge the store holds already, by device key, their starts
    /// and ends in milliseconds: a sleep run that begins where one of them does and goes on past its end (the last
    /// run of an older copy of the database, which a newer copy continues) is stored from that end on, so that
    /// importing a newer copy adds only what is new and no sleep twice. Set before reading (the import sets it from
    /// the store, Sources/WearhouseCLI/GadgetbridgeImport.swift).
    public var storedSleep: [String: [Int64: Int64]] = [:]

    /// The devices of the `DEVICE` table, by their row id.
    public private(set) var devices: [Int64: DeviceRow] = [:]
    /// The sample tables read (of ``GadgetbridgeDatabase/families`` and the Pebble overlay), with their rows.
    public private(set) var tables: [String: Int64] = [:]
    /// What went to the store, by type identifier, as read; the store's outcomes say which were new.
    public private(set) var read: [String: Int] = [:]
    public private(set) var notImported: [String: Skipped] = [:]

    /// Opens the database at `path` read only, reads its devices and names the tables it will not read.
    public init(path: String, progress: (@Sendable (Double) -> Void)?) throws(GadgetbridgeError) {
        file = try GadgetbridgeFile(path: path)
        self.progress = progress
        let names = try file.tableNames()
        guard names.contains("DEVICE") else {
            throw GadgetbridgeError("\(path) has no DEVICE table: it is not a Gadgetbridge database")
        }
        try readDevices(hasAttributes: names.contains("DEVICE_ATTRIBUTES"))
        let mapped = Set(GadgetbridgeDatabase.families.map(\.table))
        for family in GadgetbridgeDatabase.families where names.contains(family.table) {
            guard let heartRateType = HealthTypeCatalog.type(family.heartRateType) else {
                skip("table \(family.table)", "its heart rate type is not in the catalog", "", count: 1)
                continue
            }
            let columns = try file.columns(of: family.table)
            guard columns.isSuperset(of: ["TIMESTAMP", "DEVICE_ID"]) else {
                skip("table \(family.table)", "it has no TIMESTAMP or DEVICE_ID column", "", count: 1)
                continue
            }
            let rows = try file.count(family.table)
            tables[family.table] = rows
            totalRows += rows
            let orphans = try file.count(family.table, where: "DEVICE_ID NOT IN (SELECT _id FROM DEVICE)")
            if orphans > 0 {
                skip(
                    "\(family.table) DEVICE_ID", "the row's DEVICE_ID is not in the DEVICE table", "",
                    count: Int(orphans))
            }
            for id in devices.keys.sorted() {
                pending.append(Scan(family: family, heartRateType: heartRateType, deviceID: id, statement: nil))
            }
        }
        if names.contains(GadgetbridgeDatabase.pebbleOverlayTable) {
            tables[GadgetbridgeDatabase.pebbleOverlayTable] = try file.count(GadgetbridgeDatabase.pebbleOverlayTable)
        } else {
            overlayDone = true
        }
        let known = mapped.union(GadgetbridgeDatabase.deviceTables).union(GadgetbridgeDatabase.internalTables)
            .union([GadgetbridgeDatabase.pebbleOverlayTable])
        for name in names.sorted() where !known.contains(name) && !name.hasPrefix("sqlite_") {
            let rows = try file.count(name)
            guard rows > 0 else { continue }  // an empty table holds nothing to import
            let reason =
                name.hasSuffix("_SAMPLE")
                ? "rows of a sample table whose device family is not mapped"
                : "rows of a table that holds no samples wearhouse maps"
            skip("table \(name)", reason, "", count: Int(rows))
        }
        pending.reverse()
    }

    /// The next batch, or `nil` when every table has been read. A database that fails to read throws (and the
    /// import stores nothing); a row the model cannot take is counted in ``notImported`` instead.
    public func next() throws(GadgetbridgeError) -> SampleBatch? {
        var samples: [QuantitySample] = []
        while samples.count < Self.batchSamples {
            if current == nil {
                guard let scan = pending.popLast() else {
                    rowsRead = totalRows  // rows of devices not in DEVICE are counted, not read
                    if !overlayDone {
                        overlayDone = true
                        try readPebbleOverlay(into: &samples)
                    }
                    break
                }
                current = try open(scan)
            }
            guard let scan = current, let statement = scan.statement else { break }
            let stepped: Bool
            do {
                stepped = try statement.step()
            } catch {
                throw GadgetbridgeError("\(file.path): reading \(scan.family.table): \(error.message)")
            }
            guard stepped else {
                if let last = previous { finish(last, next: nil, scan, into: &samples) }
                closeRun(scan, into: &samples)
                previous = nil
                current = nil
                continue
            }
            rowsRead += 1
            guard let row = self.row(statement, scan) else { continue }
            if let last = previous { finish(last, next: row.timestamp, scan, into: &samples) }
            previous = row
        }
        if let progress, totalRows > 0 {
            let percent = Int(min(rowsRead * 100 / totalRows, 100))
            if percent != shownPercent {
                shownPercent = percent
                progress(Double(percent) / 100)
            }
        }
        guard !samples.isEmpty else { return nil }
        // One type (and device) after the other, so that the batch holds a few long streams, not one a sample.
        var order: [String] = []
        var groups: [String: [QuantitySample]] = [:]
        for sample in samples {
            let key = sample.type.identifier + "\u{0}" + (sample.device?.key ?? "")
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(sample)
        }
        return SampleBatch(order.flatMap { groups[$0] ?? [] })
    }

    // MARK: - Devices

    private func readDevices(hasAttributes: Bool) throws(GadgetbridgeError) {
        let columns = try file.columns(of: "DEVICE")
        guard columns.isSuperset(of: ["_ID", "NAME", "IDENTIFIER"]) else {
            throw GadgetbridgeError("\(file.path): the DEVICE table has no _id, NAME or IDENTIFIER column")
        }
        func column(_ name: String) -> String { columns.contains(name) ? name : "NULL" }
        let firmware =
            hasAttributes
            ? "(SELECT FIRMWARE_VERSION1 FROM DEVICE_ATTRIBUTES A WHERE A.DEVICE_ID = D._id "
                + "ORDER BY VALID_FROM_UTC DESC LIMIT 1)" : "NULL"
        let statement = try file.prepare(
            "SELECT _id, NAME, \(column("MANUFACTURER")), IDENTIFIER, \(column("TYPE")), \(column("MODEL")), "
                + "\(firmware), \(column("TYPE_NAME")) FROM DEVICE D ORDER BY _id LIMIT \(Self.maximumDevices + 1)")
        do {
            while try statement.step() {
                guard devices.count < Self.maximumDevices else {
                    throw GadgetbridgeError("\(file.path): more than \(Self.maximumDevices) devices")
                }
                func text(_ column: Int32) -> String? {
                    guard let value = statement.text(column)?.trimmingSpaces(), !value.isEmpty else { return nil }
                    return value.prefix(bytes: Self.maximumNameBytes)
                }
                let id = statement.int64(0)
                let device = Device(
                    name: text(1), manufacturer: text(2), model: text(5), firmwareVersion: text(6),
                    localIdentifier: text(3))
                devices[id] = DeviceRow(
                    id: id, device: device, type: statement.optionalInt64(4) ?? 0, typeName: text(7))
            }
        } catch let error as GadgetbridgeError {
            throw error
        } catch {
            throw GadgetbridgeError("\(file.path): reading DEVICE: \(error)")
        }
    }

    // MARK: - Rows

    private func open(_ scan: Scan) throws(GadgetbridgeError) -> Scan {
        let table = scan.family.table
        let columns = try file.columns(of: table)
        func column(_ name: String) -> String { columns.contains(name) ? name : "NULL" }
        // A time in milliseconds is read in seconds (rounded down), as every other table keeps it.
        let timestamp = scan.family.milliseconds ? "TIMESTAMP / 1000" : "TIMESTAMP"
        let statement = try file.prepare(
            "SELECT \(timestamp), \(column("STEPS")), \(column("HEART_RATE")), \(column(scan.family.kindColumn)), "
                + "\(column("DEEP_SLEEP")), \(column("REM_SLEEP")) FROM \(GadgetbridgeFile.identifier(table)) "
                + "WHERE DEVICE_ID = ? ORDER BY TIMESTAMP")
        do {
            try statement.bind(1, scan.deviceID)
        } catch {
            throw GadgetbridgeError("\(file.path): \(error.message)")
        }
        var opened = scan
        opened.statement = statement
        return opened
    }

    /// The current row, or `nil` (counted) when its timestamp is out of range.
    private func row(_ statement: SQLiteStatement, _ scan: Scan) -> Row? {
        let table = scan.family.table
        let timestamp = statement.int64(0)
        guard !statement.isNull(0), Self.validTimestamps.contains(timestamp) else {
            skip(
                "\(table) TIMESTAMP", "the timestamp is not from 2000 to 2100 (seconds since 1970)",
                place(statement.isNull(0) ? nil : timestamp, scan))
            return nil
        }
        var stage: GadgetbridgeDatabase.SleepStage?
        let kind = statement.optionalInt64(3)
        if let kind {
            let row = devices[scan.deviceID]
            let type = GadgetbridgeDatabase.DeviceType(key: row?.type ?? 0, name: row?.typeName)
            stage = scan.family.sleepStage(kind, statement.optionalInt64(4), statement.optionalInt64(5), type)
        }
        if scan.family.rowsAreSleep, stage == nil {
            skip(
                "\(table) \(scan.family.kindColumn)=\(kind.map(String.init) ?? "NULL")",
                "not a sleep stage (0 is unmeasurable)", place(timestamp, scan))
        }
        return Row(
            timestamp: timestamp, steps: statement.optionalInt64(1), heartRate: statement.optionalInt64(2),
            stage: stage)
    }

    private func place(_ timestamp: Int64?, _ scan: Scan) -> String {
        "TIMESTAMP=\(timestamp.map(String.init) ?? "NULL") DEVICE_ID=\(scan.deviceID)"
    }

    /// `row`'s samples, now that the next row's timestamp (or the end of the scan) is known.
    private func finish(_ row: Row, next: Int64?, _ scan: Scan, into samples: inout [QuantitySample]) {
        let table = scan.family.table
        var end = row.timestamp + Self.defaultIntervalSeconds
        if let next, next > row.timestamp, next - row.timestamp <= Self.maximumGapSeconds { end = next }
        let device = devices[scan.deviceID]?.device
        let offset = Self.offset(at: row.timestamp)
        if let steps = row.steps {
            if steps < 0 {
                skip("\(table) STEPS<0", "a negative step count (no measurement)", place(row.timestamp, scan))
            } else if steps == 0 {
                skip("\(table) STEPS=0", "no steps in the interval (not stored)", place(row.timestamp, scan))
            } else if steps > Self.maximumStepsPerSecond * (end - row.timestamp) {
                skip(
                    "\(table) STEPS", "more than \(Self.maximumStepsPerSecond) steps a second",
                    place(row.timestamp, scan))
            } else {
                append(
                    QuantitySample(
                        type: .stepCount, start: Instant(seconds: row.timestamp), end: Instant(seconds: end),
                        startOffsetSeconds: offset, value: Double(steps), source: Self.source, device: device),
                    table, row, scan, into: &samples)
            }
        }
        if let rate = row.heartRate {
            if Self.validHeartRates.contains(rate) {
                let instant = Instant(seconds: row.timestamp)
                append(
                    QuantitySample(
                        type: scan.heartRateType, start: instant, end: instant, startOffsetSeconds: offset,
                        value: Double(rate), source: Self.source, device: device),
                    table, row, scan, into: &samples)
            } else if [-1, 0, 255].contains(rate) {
                skip(
                    "\(table) HEART_RATE=\(rate)", "Gadgetbridge's marker of no measurement", place(row.timestamp, scan)
                )
            } else {
                skip(
                    "\(table) HEART_RATE",
                    "not from \(Self.validHeartRates.lowerBound) to "
                        + "\(Self.validHeartRates.upperBound) beats per minute", place(row.timestamp, scan))
            }
        }
        if let stage = row.stage {
            if var open = run, open.stage == stage, open.end == row.timestamp,
                end - open.start <= Self.maximumSleepSeconds
            {
                open.end = end
                run = open
            } else {
                closeRun(scan, into: &samples)
                run = SleepRun(stage: stage, start: row.timestamp, end: end)
            }
        } else {
            closeRun(scan, into: &samples)
        }
    }

    private func closeRun(_ scan: Scan, into samples: inout [QuantitySample]) {
        guard let open = run else { return }
        run = nil
        appendSleep(open, scan.family.table, scan.deviceID, into: &samples)
    }

    private func appendSleep(
        _ sleep: SleepRun, _ table: String, _ deviceID: Int64, into samples: inout [QuantitySample]
    ) {
        let device = devices[deviceID]?.device
        // A run that continues sleep stored from an older copy of the database (whose last run ended where that
        // copy's rows did) keeps the stored samples and adds only the rest.
        var start = sleep.start * 1_000
        if let device, let stored = storedSleep[device.key] {
            while let end = stored[start], end > start, end < sleep.end * 1_000 { start = end }
        }
        let sample = QuantitySample(
            type: .sleepAnalysis, start: Instant(milliseconds: start), end: Instant(seconds: sleep.end),
            startOffsetSeconds: Self.offset(at: start / 1_000), value: Double(sleep.stage.categoryValue),
            source: Self.source, device: device)
        if let reason = sample.invalidityReason(as: .sleepAnalysis) {
            skip("\(table) sleep", reason, "TIMESTAMP=\(start / 1_000) DEVICE_ID=\(deviceID)")
            return
        }
        samples.append(sample)
        read[HealthType.sleepAnalysis.identifier, default: 0] += 1
    }

    private func append(
        _ sample: QuantitySample, _ table: String, _ row: Row, _ scan: Scan, into samples: inout [QuantitySample]
    ) {
        if let reason = sample.invalidityReason(as: sample.type) {
            skip("\(table) \(sample.type.identifier)", reason, place(row.timestamp, scan))
            return
        }
        samples.append(sample)
        read[sample.type.identifier, default: 0] += 1
    }

    /// Pebble Health's sleep: each overlay row (`TIMESTAMP_FROM` to `TIMESTAMP_TO`, a sleep `RAW_KIND`) is one
    /// `sleepAnalysis` sample. The table is small (one row per sleep stage change), so it is read at once.
    private func readPebbleOverlay(into samples: inout [QuantitySample]) throws(GadgetbridgeError) {
        let table = GadgetbridgeDatabase.pebbleOverlayTable
        let columns = try file.columns(of: table)
        guard columns.isSuperset(of: ["TIMESTAMP_FROM", "TIMESTAMP_TO", "RAW_KIND", "DEVICE_ID"]) else {
            skip("table \(table)", "it has no TIMESTAMP_FROM, TIMESTAMP_TO, RAW_KIND or DEVICE_ID column", "")
            return
        }
        let statement = try file.prepare(
            "SELECT TIMESTAMP_FROM, TIMESTAMP_TO, RAW_KIND, DEVICE_ID FROM \(GadgetbridgeFile.identifier(table)) "
                + "ORDER BY DEVICE_ID, TIMESTAMP_FROM")
        do {
            while try statement.step() {
                let (from, to, kind, deviceID) = (
                    statement.int64(0), statement.int64(1), statement.int64(2), statement.int64(3)
                )
                let rowPlace = "TIMESTAMP_FROM=\(from) DEVICE_ID=\(deviceID)"
                guard devices[deviceID] != nil else {
                    skip("\(table) DEVICE_ID", "the row's DEVICE_ID is not in the DEVICE table", rowPlace)
                    continue
                }
                guard Self.validTimestamps.contains(from), Self.validTimestamps.contains(to), to > from,
                    to - from <= Self.maximumSleepSeconds
                else {
                    skip("\(table) TIMESTAMP", "the interval is not 2000-2100, forward and at most a day", rowPlace)
                    continue
                }
                guard let stage = GadgetbridgeDatabase.pebbleStage(kind) else {
                    skip("\(table) RAW_KIND=\(kind)", "not a sleep kind", rowPlace)
                    continue
                }
                appendSleep(SleepRun(stage: stage, start: from, end: to), table, deviceID, into: &samples)
            }
        } catch {
            throw GadgetbridgeError("\(file.path): reading \(table): \(error.message)")
        }
    }

    /// The local time zone's offset at `timestamp` (Gadgetbridge stores UTC and shows the phone's local time).
    static func offset(at timestamp: Int64) -> Int32 {
        Int32(TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(timestamp))))
    }

    private func skip(_ what: String, _ reason: String, _ first: String, count: Int = 1) {
        if notImported[what] == nil {
            notImported[what] = Skipped(count: count, reason: reason, first: first)
        } else {
            notImported[what]?.count += count
        }
    }
}
