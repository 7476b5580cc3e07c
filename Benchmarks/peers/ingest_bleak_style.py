#!/usr/bin/python3
"""Peer for the `ingest` benchmark: what a typical bleak + sqlite3 script does with heart-rate notifications.

It struct-decodes each notification, keys the row with uuid4, and inserts with executemany in batches of 1,000,
in WAL mode with synchronous=FULL (the same durability as wearhouse).

Usage: ingest_bleak_style.py DATA DB. DATA has one "start_ms,value" line per sample.
Prints {"samples": n, "seconds": s, "bytes": size of DB + WAL}.
"""
import json
import os
import sqlite3
import struct
import sys
import time
import uuid


def main():
    data, path = sys.argv[1], sys.argv[2]
    notifications = []
    with open(data) as f:
        for line in f:
            start, value = line.split(",")
            # what arrives from BlueZ: flags 0x16 + uint8 bpm + one RR interval
            notifications.append((int(start), bytes([0x16, int(float(value))]) + struct.pack("<H", 1000)))
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE heart_rate (id TEXT PRIMARY KEY, ts_ms INTEGER, bpm INTEGER, rr_ms REAL, device TEXT)")
    begin = time.perf_counter()
    batch = []
    for start, payload in notifications:
        flags = payload[0]
        bpm = struct.unpack_from("<H", payload, 1)[0] if flags & 1 else payload[1]
        rr = struct.unpack_from("<H", payload, 2)[0] * 1000 / 1024 if flags & 0x10 else None
        batch.append((str(uuid.uuid4()), start, bpm, rr, "A0:9E:1A:00:00:01"))
        if len(batch) == 1000:
            with db:
                db.executemany("INSERT INTO heart_rate VALUES (?, ?, ?, ?, ?)", batch)
            batch = []
    if batch:
        with db:
            db.executemany("INSERT INTO heart_rate VALUES (?, ?, ?, ?, ?)", batch)
    seconds = time.perf_counter() - begin
    db.close()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    print(json.dumps({"samples": len(notifications), "seconds": seconds, "bytes": size}))


main()
