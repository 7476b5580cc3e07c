"""Peer for the `query` benchmark: the same 1 Hz heart-rate series in DuckDB (PyPI `duckdb`, a columnar engine
built for this kind of aggregate), and the same daily avg/min/max as a GROUP BY over it.

Usage: python3 query_duckdb.py DAYS RUNS. Generates DAYS * 86400 rows with the harness's formula
(value = 60 + (i / 7) % 50, one a second from START) inside DuckDB (generation is not timed), then runs the
GROUP BY RUNS times after a warm-up. Prints {"samples": n, "seconds": [run, ...], "days_returned": k}.
Exits 69 when the duckdb module is not installed.
"""
import json
import sys
import time

try:
    import duckdb
except ImportError:
    sys.exit(69)

START = 1743289200000


def main() -> None:
    days, runs = int(sys.argv[1]), int(sys.argv[2])
    n = days * 86400
    db = duckdb.connect()
    db.execute(
        "CREATE TABLE sample AS SELECT ? + i * 1000 AS start_ms, CAST(60 + (i // 7) % 50 AS DOUBLE) AS value "
        "FROM range(?) t(i)",
        [START, n],
    )
    query = (
        "SELECT (start_ms - ?) // 86400000 AS day, avg(value), min(value), max(value) FROM sample "
        "WHERE start_ms >= ? AND start_ms < ? GROUP BY day ORDER BY day"
    )
    seconds = []
    returned = 0
    for run in range(runs + 1):
        begin = time.perf_counter()
        rows = db.execute(query, [START, START, START + n * 1000]).fetchall()
        elapsed = time.perf_counter() - begin
        returned = len(rows)
        if run > 0:
            seconds.append(elapsed)
    print(json.dumps({"samples": n, "seconds": seconds, "days_returned": returned}))


if __name__ == "__main__":
    main()
