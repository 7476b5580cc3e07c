import Foundation

/// What wearhouse knows of Gadgetbridge's database (the Android companion app's SQLite file, `Gadgetbridge` in
/// its export folder): how to recognise it, and the activity-sample tables of the device families it maps, each
/// with the meaning of its `RAW_KIND` column. Table and column names are those greenDAO generates from
/// Gadgetbridge's entities (`MiBandActivitySample` is table `MI_BAND_ACTIVITY_SAMPLE`, `heartRate` column
/// `HEART_RATE`); the schema the tests build is Tests/Resources/gadgetbridge/schema.sql.
public enum GadgetbridgeDatabase {
    /// A sleep stage, as the family's raw kind says it.
    public enum SleepStage: Sendable, Hashable {
        case light, deep, rem, awake

        /// The `sleepAnalysis` value: light sleep is `asleepCore`, as HealthKit calls it.
        public var categoryValue: Int {
            switch self {
            case .light: 3
            case .deep: 4
            case .rem: 5
            case .awake: 2
            }
        }
    }

    /// One device family's sample table.
    public struct Family: Sendable {
        /// The table, as greenDAO names it.
        public let table: String
        /// For people: `Mi Band / Amazfit`.
        public let name: String
        /// The column of the sleep stage (`RAW_KIND`; Garmin's stage table: `STAGE`).
        let kindColumn: String
        /// Whether `TIMESTAMP` is in milliseconds (Gadgetbridge's newer "time sample" tables), not seconds.
        let milliseconds: Bool
        /// Whether every row is meant to be a sleep stage (a row that is none is counted as not imported).
        let rowsAreSleep: Bool
        /// The catalog type of the `HEART_RATE` column's samples (`restingHeartRate` in Garmin's resting table).
        let heartRateType: String
        /// The sleep stage of a row: its kind, (Huami's extended table) its `DEEP_SLEEP` and `REM_SLEEP` scores,
        /// and the row's device; `nil` when the row is not sleep.
        let sleepStage:
            @Sendable (_ rawKind: Int64, _ deepSleep: Int64?, _ remSleep: Int64?, _ device: DeviceType)
                -> SleepStage?

        init(
            table: String, name: String, kindColumn: String = "RAW_KIND", milliseconds: Bool = false,
            rowsAreSleep: Bool = false, heartRateType: String = "heartRate",
            sleepStage: @escaping @Sendable (Int64, Int64?, Int64?, DeviceType) -> SleepStage?
        ) {
            self.table = table
            self.name = name
            self.kindColumn = kindColumn
            self.milliseconds = milliseconds
            self.rowsAreSleep = rowsAreSleep
            self.heartRateType = heartRateType
            self.sleepStage = sleepStage
        }
    }

    /// Gadgetbridge's kind of device (`DEVICE.TYPE`, and `TYPE_NAME` where the database has it).
    public struct DeviceType: Sendable, Hashable {
        public var key: Int64
        public var name: String?

        public init(key: Int64, name: String? = nil) {
            self.key = key
            self.name = name
        }

        /// The first Mi Band (`MIBAND`, key 10), whose kinds are not those of the bands after it.
        var isMiBand1: Bool { name.map { $0 == "MIBAND" } ?? (key == 10) }
    }

    /// Gadgetbridge's common activity kinds (`ActivityKind` codes), which PineTime and Garmin store as they are:
    /// light sleep 0x2, deep sleep 0x4, REM sleep 0x1000000, awake during sleep 0x2000000.
    static func activityKindStage(_ kind: Int64) -> SleepStage? {
        switch kind {
        case 0x2: .light
        case 0x4: .deep
        case 0x100_0000: .rem
        case 0x200_0000: .awake
        default: nil
        }
    }

    /// The families mapped. Mi Band 2 and later (and the Amazfit watches on the same protocol) store the band's
    /// kind in the low four bits: 9 light sleep, 11 deep sleep; the first Mi Band (device type `MIBAND`, 10) in
    /// the same table stores 4 deep and 5 light sleep (3 not worn, 6 charging), as Gadgetbridge's Mi Band 1 sample
    /// provider reads them. Huami's extended table says 120 for sleep, with deep and REM scores (a REM score over
    /// 55 is REM, a deep score over 42 deep, as Gadgetbridge shows it), 121 deep and 122 REM. Pebble Health keeps
    /// sleep in `PEBBLE_HEALTH_ACTIVITY_OVERLAY` (1 and 3 light, 2 and 4 deep), read with its samples. Fossil's
    /// hybrid watches store a wearing state, not sleep. Garmin keeps steps and heart rates in its activity table
    /// (with Gadgetbridge's kinds), sleep in `GARMIN_SLEEP_STAGE_SAMPLE` (the FIT sleep levels: 1 awake, 2 light, 3
    /// deep, 4 REM; 0, unmeasurable, is not sleep) and the daily resting heart rate in
    /// `GARMIN_HEART_RATE_RESTING_SAMPLE`, both time-stamped in milliseconds.
    public static let families: [Family] = [
        Family(table: "MI_BAND_ACTIVITY_SAMPLE", name: "Mi Band / Amazfit") { kind, _, _, device in
            if device.isMiBand1 {
                switch kind {
                case 4: return .deep
                case 5: return .light
                default: return nil
                }
            }
            guard kind >= 0 else { return nil }
            switch kind & 0xF {
            case 9: return .light
            case 11: return .deep
            default: return nil
            }
        },
        Family(table: "HUAMI_EXTENDED_ACTIVITY_SAMPLE", name: "Huami (extended)") { kind, deep, rem, _ in
            switch kind {
            case 120:
                if let rem, rem & 127 > 55 { return .rem }
                if let deep, deep & 127 > 42 { return .deep }
                return .light
            case 121: return .deep
            case 122: return .rem
            default: return nil
            }
        },
        Family(table: "PEBBLE_HEALTH_ACTIVITY_SAMPLE", name: "Pebble") { kind, _, _, _ in pebbleStage(kind) },
        Family(table: "PINE_TIME_ACTIVITY_SAMPLE", name: "PineTime / InfiniTime") { kind, _, _, _ in
            activityKindStage(kind)
        },
        Family(table: "HYBRID_HRACTIVITY_SAMPLE", name: "Fossil Hybrid HR") { _, _, _, _ in nil },
        Family(table: "GARMIN_ACTIVITY_SAMPLE", name: "Garmin") { kind, _, _, _ in activityKindStage(kind) },
        Family(
            table: "GARMIN_SLEEP_STAGE_SAMPLE", name: "Garmin sleep stages", kindColumn: "STAGE", milliseconds: true,
            rowsAreSleep: true
        ) { stage, _, _, _ in
            switch stage {
            case 1: .awake
            case 2: .light
            case 3: .deep
            case 4: .rem
            default: nil
            }
        },
        Family(
            table: "GARMIN_HEART_RATE_RESTING_SAMPLE", name: "Garmin resting heart rate", milliseconds: true,
            heartRateType: "restingHeartRate"
        ) { _, _, _, _ in nil },
    ]

    /// Pebble Health's sleep kinds (in its overlay table): 1 light, 2 deep, 3 light nap, 4 deep nap.
    static func pebbleStage(_ kind: Int64) -> SleepStage? {
        switch kind {
        case 1, 3: .light
        case 2, 4: .deep
        default: nil
        }
    }

    /// Pebble Health's sleep intervals: `TIMESTAMP_FROM`, `TIMESTAMP_TO`, `RAW_KIND`, `DEVICE_ID`.
    public static let pebbleOverlayTable = "PEBBLE_HEALTH_ACTIVITY_OVERLAY"

    /// Tables read for the devices: `DEVICE` and its attributes (firmware).
    static let deviceTables: Set = ["DEVICE", "DEVICE_ATTRIBUTES"]

    /// Tables every Android SQLite database or SQLite itself has, which are not Gadgetbridge's data.
    static let internalTables: Set = ["android_metadata", "sqlite_sequence", "sqlite_stat1", "sqlite_stat4"]

    /// What the first bytes of a file say it is.
    public enum Kind: Sendable, Equatable {
        /// An SQLite database with Gadgetbridge's tables.
        case gadgetbridge
        /// An SQLite database without them (`DEVICE` and at least one `..._SAMPLE` table).
        case otherSQLite
    }

    /// Whether the file at `path` is an SQLite database (its 16-byte header, `SQLite format 3\0`), and then
    /// whether it has Gadgetbridge's tables; `nil` when it is not SQLite at all. The file is opened read only.
    public static func kind(ofFileAt path: String) -> Kind? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        guard [UInt8](head) == Array("SQLite format 3".utf8) + [0] else { return nil }
        guard let tables = try? GadgetbridgeFile(path: path).tableNames() else { return .otherSQLite }
        let hasSamples = tables.contains { $0.hasSuffix("_SAMPLE") }
        return tables.contains("DEVICE") && hasSamples ? .gadgetbridge : .otherSQLite
    }
}

/// Why a Gadgetbridge database cannot be read (nothing is imported).
public struct GadgetbridgeError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
