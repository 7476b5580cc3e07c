#!/usr/bin/python3
"""Peer for the `import` benchmark: what a plain script does with a JSON-lines file of samples.

json.loads per line, the RFC 3339 times to epoch milliseconds (datetime.fromisoformat), executemany in batches of
1,000 into a row table, each batch a transaction, in WAL mode with synchronous=FULL (the durability of wearhouse).
It checks nothing beyond what parsing needs, and a failure leaves the batches before it stored.

Usage: import_ndjson.py FILE DB. Prints {"samples": n, "seconds": s, "bytes": size of DB + WAL}.
"""
import datetime
import json
import os
import sqlite3
import sys
import time


def milliseconds(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def main():
    source, path = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE samples (type TEXT, start_ms INTEGER, end_ms INTEGER, value REAL, unit TEXT, source TEXT)")
    batch = []
    count = 0

    def flush():
        db.execute("BEGIN")
        db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?)", batch)
        db.execute("COMMIT")
        batch.clear()

    with open(source) as lines:
        for line in lines:
            sample = json.loads(line)
            start = milliseconds(sample["start"])
            end = milliseconds(sample["end"]) if sample.get("end") else start
            batch.append((sample["type"], start, end, float(sample["value"]), sample.get("unit"), sample.get("source")))
            count += 1
            if len(batch) >= 1000:
                flush()
    if batch:
        flush()
    seconds = time.monotonic() - started
    db.close()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    print(json.dumps({"samples": count, "seconds": seconds, "bytes": size}))


if __name__ == "__main__":
    main()
