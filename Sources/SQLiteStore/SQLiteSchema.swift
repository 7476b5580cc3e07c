/// The SQLite schema and its forward migrations. `PRAGMA user_version` holds the version; each migration runs
/// in one transaction, so a store is always at one version or the next, never between.
enum SQLiteSchema {
    /// Migrations in order; index 0 takes a new file to version 1.
    static let migrations: [String] = [
        """
        CREATE TABLE types (id INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE) STRICT;
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY, identifier TEXT NOT NULL, version TEXT NOT NULL DEFAULT '',
            UNIQUE (identifier, version)) STRICT;
        CREATE TABLE devices (
            id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT, manufacturer TEXT, model TEXT,
            hardware TEXT, firmware TEXT, software TEXT, serial TEXT, local_id TEXT) STRICT;
        CREATE TABLE subjects (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT;
        -- One row per sample, clustered by (type, start): range scans read consecutive pages.
        -- device_id and subject_id are 0 when absent, so that they can take part in unique keys.
        CREATE TABLE samples (
            type_id INTEGER NOT NULL, start_ms INTEGER NOT NULL, uuid BLOB NOT NULL,
            end_ms INTEGER NOT NULL, start_offset_s INTEGER NOT NULL, value REAL NOT NULL,
            source_id INTEGER NOT NULL, device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL,
            writer TEXT NOT NULL, external_uuid TEXT, version INTEGER, seq INTEGER NOT NULL, metadata TEXT,
            PRIMARY KEY (type_id, start_ms, uuid), CHECK (end_ms >= start_ms)) STRICT, WITHOUT ROWID;
        CREATE UNIQUE INDEX samples_uuid ON samples (uuid);
        CREATE UNIQUE INDEX samples_natural ON samples (type_id, source_id, device_id, start_ms, end_ms)
            WHERE external_uuid IS NULL;
        CREATE UNIQUE INDEX samples_external ON samples (source_id, type_id, external_uuid)
            WHERE external_uuid IS NOT NULL;
        CREATE INDEX samples_seq ON samples (type_id, seq);
        CREATE TABLE tombstones (
            seq INTEGER PRIMARY KEY, type_id INTEGER NOT NULL, uuid BLOB NOT NULL, writer TEXT NOT NULL,
            deleted_ms INTEGER NOT NULL, replaced_by BLOB) STRICT;
        CREATE INDEX tombstones_type ON tombstones (type_id, seq);
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT, WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('seq', 0);
        CREATE TABLE grants (
            app TEXT NOT NULL, type TEXT NOT NULL, read INTEGER NOT NULL, share INTEGER NOT NULL,
            PRIMARY KEY (app, type)) STRICT, WITHOUT ROWID;
        CREATE TABLE priorities (
            type TEXT NOT NULL, position INTEGER NOT NULL, source TEXT NOT NULL, device TEXT,
            PRIMARY KEY (type, position)) STRICT, WITHOUT ROWID;
        CREATE TABLE access_log (
            id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, caller TEXT NOT NULL, operation TEXT NOT NULL,
            type TEXT, count INTEGER NOT NULL, denied INTEGER NOT NULL) STRICT;
        """,
        // 2: dense series. Owner-written discrete samples whose id derives from their natural key are kept
        // as chunks of up to `SQLiteHealthStore.chunkCapacity` points per stream (SeriesChunkCodec), not a row
        // each. A stream is (type, source, device, subject) with one UTC offset and one metadata dictionary.
        """
        CREATE TABLE series_chunks (
            id INTEGER PRIMARY KEY, type_id INTEGER NOT NULL, source_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL, start_ms INTEGER NOT NULL,
            end_ms INTEGER NOT NULL, last_start_ms INTEGER NOT NULL, count INTEGER NOT NULL,
            start_offset_s INTEGER NOT NULL, metadata TEXT, last_seq INTEGER NOT NULL, data BLOB NOT NULL) STRICT;
        CREATE INDEX series_chunks_time ON series_chunks (type_id, start_ms);
        CREATE INDEX series_chunks_stream ON series_chunks (type_id, source_id, device_id, end_ms);
        CREATE INDEX series_chunks_changes ON series_chunks (type_id, last_seq);
        CREATE INDEX series_chunks_span ON series_chunks (start_ms, end_ms);
        """,
        // 3: 15-minute rollups of discrete types per stream, maintained on every write, so that statistics over
        // weeks or years read a row per quarter hour instead of every sample. Buckets hold the samples whose
        // start lies in them.
        """
        CREATE TABLE rollups (
            type_id INTEGER NOT NULL, bucket_ms INTEGER NOT NULL, source_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL, n INTEGER NOT NULL, sum REAL NOT NULL,
            min REAL NOT NULL, max REAL NOT NULL, recent_start INTEGER NOT NULL, recent_end INTEGER NOT NULL,
            recent_value REAL NOT NULL,
            PRIMARY KEY (type_id, bucket_ms, source_id, device_id, subject_id)) STRICT, WITHOUT ROWID;
        """,
        // 4: how long each type is kept (no row: forever).
        """
        CREATE TABLE retention (type TEXT PRIMARY KEY, days INTEGER NOT NULL CHECK (days > 0)) STRICT, WITHOUT ROWID;
        """,
        // 5: the access log moves to its own file (see `sideSchema`), so that logging a read never waits
        // for the lock of a long write transaction in another process.
        """
        DROP TABLE access_log;
        """,
        // 6: heartbeat series, one row each with its beats in a blob (HeartbeatCodec). The natural key
        // (source, device, start, end) is the primary key, so rows cluster by start time and a replayed series
        // is found with one lookup; the index on end_ms bounds overlap queries from below.
        """
        CREATE TABLE heartbeat_series (
            start_ms INTEGER NOT NULL, source_id INTEGER NOT NULL, device_id INTEGER NOT NULL, end_ms INTEGER NOT NULL,
            uuid BLOB NOT NULL, start_offset_s INTEGER NOT NULL, subject_id INTEGER NOT NULL, writer TEXT NOT NULL,
            seq INTEGER NOT NULL, metadata TEXT, beat_count INTEGER NOT NULL, beats BLOB NOT NULL,
            PRIMARY KEY (start_ms, source_id, device_id, end_ms), CHECK (end_ms >= start_ms)) STRICT, WITHOUT ROWID;
        CREATE UNIQUE INDEX heartbeat_series_uuid ON heartbeat_series (uuid);
        CREATE INDEX heartbeat_series_end ON heartbeat_series (end_ms);
        CREATE INDEX heartbeat_series_seq ON heartbeat_series (seq);
        """,
        // 7: the sensor registry (`wearhouse pair`), and its version: a counter bumped by every change, which a
        // running gateway polls. Sensor statuses live in the side file (`sideSchema`).
        """
        CREATE TABLE sensors (
            address TEXT PRIMARY KEY, adapter TEXT, name TEXT, label TEXT, subject TEXT, location TEXT, device TEXT,
            services TEXT NOT NULL, paired INTEGER NOT NULL, notify_mode TEXT NOT NULL, enrolled_ms INTEGER NOT NULL
            ) STRICT, WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('registry', 0);
        """,
        // 8: heartbeat series, leaner (a series a minute is half a million rows a year): the rowid is the row's
        // write-order number, so changes read the table itself; the uuid is kept only when it is not the one
        // derived from the natural key; metadata dictionaries are interned; the natural-key index also serves time
        // ranges, bounded below by the longest span stored (the `heartbeat_span` counter). Rows move over as they
        // are (their uuids kept); their blobs are rewritten in the codec's version 2 (`upgradeHeartbeatBlobs`).
        """
        CREATE TABLE metadata_sets (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE) STRICT;
        INSERT INTO metadata_sets (text)
            SELECT DISTINCT metadata FROM heartbeat_series WHERE metadata IS NOT NULL;
        CREATE TABLE heartbeat_series_8 (
            id INTEGER PRIMARY KEY, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, source_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL, start_offset_s INTEGER NOT NULL,
            writer TEXT NOT NULL, metadata_id INTEGER NOT NULL, uuid BLOB, beats BLOB NOT NULL,
            CHECK (end_ms >= start_ms)) STRICT;
        INSERT INTO heartbeat_series_8 (id, start_ms, end_ms, source_id, device_id, subject_id, start_offset_s,
                writer, metadata_id, uuid, beats)
            SELECT h.seq, h.start_ms, h.end_ms, h.source_id, h.device_id, h.subject_id, h.start_offset_s, h.writer,
                coalesce((SELECT m.id FROM metadata_sets m WHERE m.text = h.metadata), 0), h.uuid, h.beats
            FROM heartbeat_series h ORDER BY h.seq;
        DROP TABLE heartbeat_series;
        ALTER TABLE heartbeat_series_8 RENAME TO heartbeat_series;
        CREATE UNIQUE INDEX heartbeat_series_natural ON heartbeat_series (start_ms, source_id, device_id, end_ms);
        CREATE UNIQUE INDEX heartbeat_series_uuid ON heartbeat_series (uuid) WHERE uuid IS NOT NULL;
        INSERT INTO counters (name, value)
            SELECT 'heartbeat_span', coalesce(max(end_ms - start_ms), 0) FROM heartbeat_series;
        """,
        // 9: apps' permission requests (the bus API's RequestAuthorization), one row per type and direction:
        // pending until the owner next decides on the app (grant or revoke), then kept as decided so that the
        // app is not asked about it again.
        """
        CREATE TABLE authorization_requests (
            app TEXT NOT NULL, type TEXT NOT NULL, direction TEXT NOT NULL CHECK (direction IN ('read', 'share')),
            pending INTEGER NOT NULL, requested_ms INTEGER NOT NULL,
            PRIMARY KEY (app, type, direction)) STRICT, WITHOUT ROWID;
        """,
        // 10: access-log entries of writes commit with the write, in the store's own file: a save then costs one
        // durable commit instead of two (one per file), and its entry is exactly as durable as its samples.
        // Writes of one caller, operation and type within a wall-clock minute add up in one entry (a gateway
        // writes four batches a second: an entry each would outgrow the samples). Entries of reads and refused
        // writes stay in the side file; the log reads both.
        """
        CREATE TABLE write_log (
            minute_ms INTEGER NOT NULL, caller TEXT NOT NULL, operation TEXT NOT NULL, type TEXT NOT NULL,
            at_ms INTEGER NOT NULL, count INTEGER NOT NULL, writes INTEGER NOT NULL,
            PRIMARY KEY (minute_ms, caller, operation, type)) STRICT, WITHOUT ROWID;
        """,
        // 11: one index fewer to update with every chunk written (ingest is bound by the pages a commit writes):
        // the (start, end) index served only deletions by id, which now search each type's (type, start) index
        // down to the longest span a chunk has (the `chunk_span` counter: the most `end_ms - start_ms` of any
        // chunk, which also bounds time-range queries from below).
        """
        DROP INDEX series_chunks_span;
        INSERT INTO counters (name, value)
            SELECT 'chunk_span', coalesce(max(end_ms - start_ms), 0) FROM series_chunks;
        """,
        // 12: characteristics (HealthKit's biological sex, blood type, date of birth, skin type) per subject ('' is
        // the store's own person), as text: an enumeration value's name or a date YYYY-MM-DD
        // (`docs/store-semantics.md`, item 26).
        """
        CREATE TABLE characteristics (
            subject TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, updated_ms INTEGER NOT NULL,
            PRIMARY KEY (subject, type)) STRICT, WITHOUT ROWID;
        """,
        // 13: what the merge does with provenances missing from a type's priority list (`wearhouse priority`), one
        // row per type whose priority is set (type '*': the default for the rest). Lists set before had gapFill.
        """
        CREATE TABLE priority_policies (
            type TEXT PRIMARY KEY, unranked TEXT NOT NULL CHECK (unranked IN ('gapFill', 'exclude'))) STRICT,
            WITHOUT ROWID;
        INSERT INTO priority_policies (type, unranked) SELECT DISTINCT type, 'gapFill' FROM priorities;
        """,
        // 14: correlations and workouts (`docs/store-semantics.md`, items 27 and 28), a row each in `objects` (a
        // workout's own fields in `body`, ObjectCoding's JSON), and their samples in `object_members`: a
        // correlation's members, a workout's associated samples, each named by id with its type and interval.
        """
        CREATE TABLE objects (
            uuid BLOB PRIMARY KEY, type_id INTEGER NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,
            start_offset_s INTEGER NOT NULL, source_id INTEGER NOT NULL, device_id INTEGER NOT NULL,
            subject_id INTEGER NOT NULL, writer TEXT NOT NULL, seq INTEGER NOT NULL, metadata TEXT, body TEXT,
            CHECK (end_ms >= start_ms)) STRICT, WITHOUT ROWID;
        CREATE INDEX objects_time ON objects (type_id, start_ms);
        CREATE INDEX objects_seq ON objects (type_id, seq);
        CREATE TABLE object_members (
            object_uuid BLOB NOT NULL, sample_uuid BLOB NOT NULL, type TEXT NOT NULL, start_ms INTEGER NOT NULL,
            end_ms INTEGER NOT NULL, PRIMARY KEY (object_uuid, sample_uuid)) STRICT, WITHOUT ROWID;
        CREATE INDEX object_members_sample ON object_members (sample_uuid);
        """,
        // 15: 15-minute rollups of cumulative types per stream (`CumulativeRollup`): the pro-rated sum of each
        // sample's portion in the quarter hour; the portions' span, covered length and flags packed in `shape`
        // (`CumulativeRollupValue.shape(bucket:)`); the range of their sequence numbers. Samples longer than a day
        // are counted per span in `cumulative_spans` instead. Filled from the samples already stored.
        """
        CREATE TABLE cumulative_rollups (
            type_id INTEGER NOT NULL, bucket_ms INTEGER NOT NULL, source_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL, sum REAL NOT NULL, shape INTEGER NOT NULL,
            min_seq INTEGER NOT NULL, max_seq INTEGER NOT NULL,
            PRIMARY KEY (type_id, bucket_ms, source_id, device_id, subject_id)) STRICT, WITHOUT ROWID;
        CREATE TABLE cumulative_spans (
            type_id INTEGER NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, count INTEGER NOT NULL,
            PRIMARY KEY (type_id, start_ms, end_ms)) STRICT, WITHOUT ROWID;
        """,
        // 16: the discrete rollups summed per UTC day, kept with the quarter hours': statistics in buckets of a day
        // or more read a bucket's whole days from here (a year of weekly buckets: 365 rows a stream, not 35,040).
        // Filled from the quarter hours already stored.
        """
        CREATE TABLE day_rollups (
            type_id INTEGER NOT NULL, day_ms INTEGER NOT NULL, source_id INTEGER NOT NULL,
            device_id INTEGER NOT NULL, subject_id INTEGER NOT NULL, n INTEGER NOT NULL, sum REAL NOT NULL,
            min REAL NOT NULL, max REAL NOT NULL, recent_start INTEGER NOT NULL, recent_end INTEGER NOT NULL,
            recent_value REAL NOT NULL,
            PRIMARY KEY (type_id, day_ms, source_id, device_id, subject_id)) STRICT, WITHOUT ROWID;
        """,
    ]

    /// The side file, `<store>-access`, for what is written often and must never wait for (or hold up) a write
    /// transaction on the samples: the access log, written by every call, reads included, and the sensor
    /// statuses the gateway reports every few seconds. Created when missing, on every open.
    static let sideSchema = """
        CREATE TABLE IF NOT EXISTS access_log (
            id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, caller TEXT NOT NULL, operation TEXT NOT NULL,
            type TEXT, count INTEGER NOT NULL, denied INTEGER NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS sensor_status (
            address TEXT PRIMARY KEY, state TEXT NOT NULL, battery INTEGER, last_sample_ms INTEGER,
            notifications INTEGER NOT NULL, samples INTEGER NOT NULL, malformed INTEGER NOT NULL,
            dropped INTEGER NOT NULL, reconnects INTEGER NOT NULL, updated_ms INTEGER NOT NULL) STRICT, WITHOUT ROWID;
        """

    static var currentVersion: Int { migrations.count }

    /// What a migration needs beyond SQL, run in its transaction after its SQL: `version` is the version it
    /// takes the store to.
    static func finish(migrationTo version: Int, on connection: SQLiteConnection) throws {
        if version == 8 { try upgradeHeartbeatBlobs(on: connection) }
        if version == 15 { try SQLiteHealthStore.buildCumulativeRollups(on: connection) }
        if version == 16 { try SQLiteHealthStore.buildDayRollups(on: connection) }
    }
}
