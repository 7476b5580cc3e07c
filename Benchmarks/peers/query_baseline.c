/* Peer for the `query` benchmark: the same 1 Hz heart-rate series in a plain row-per-sample SQLite table,
 * and a daily avg/min/max statistics collection as a plain SQL GROUP BY over it.
 *
 * Usage: query_baseline DB DAYS RUNS [BUCKET_DAYS]. Generates DAYS * 86400 samples with the harness's formula
 * (value = 60 + (i / 7) % 50, one a second from START), indexes them by time, then runs the GROUP BY (per day, or
 * per BUCKET_DAYS days: 7 for the web app's year chart) RUNS times after a warm-up. Prints {"samples": n,
 * "seconds": [run, ...], "days_returned": k} (k: the buckets returned).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define START 1743289200000LL

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) { fprintf(stderr, "usage: query_baseline DB DAYS RUNS [BUCKET_DAYS]\n"); return 64; }
    long long days = atoll(argv[2]), n = days * 86400;
    long long bucket_ms = (argc == 5 ? atoll(argv[4]) : 1) * 86400000LL;
    if (bucket_ms <= 0) { fprintf(stderr, "BUCKET_DAYS must be 1 or more\n"); return 64; }
    int runs = atoi(argv[3]);
    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "CREATE TABLE sample (start_ms INTEGER PRIMARY KEY, value REAL NOT NULL);", NULL, NULL, NULL);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO sample (start_ms, value) VALUES (?1, ?2)", -1, &insert, NULL);
    for (long long i = 0; i < n; i++) {
        if (i % 100000 == 0) sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        sqlite3_bind_int64(insert, 1, START + i * 1000);
        sqlite3_bind_double(insert, 2, 60 + (i / 7) % 50);
        sqlite3_step(insert);
        sqlite3_reset(insert);
        if (i % 100000 == 99999 || i == n - 1) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    sqlite3_finalize(insert);
    sqlite3_stmt *query;
    sqlite3_prepare_v2(db, "SELECT (start_ms - ?1) / ?3 AS day, avg(value), min(value), max(value) FROM sample"
                           " WHERE start_ms >= ?1 AND start_ms < ?2 GROUP BY day ORDER BY day", -1, &query, NULL);
    printf("{\"samples\": %lld, \"seconds\": [", n);
    int returned = 0;
    for (int run = 0; run <= runs; run++) {
        double begin = now();
        sqlite3_bind_int64(query, 1, START);
        sqlite3_bind_int64(query, 2, START + n * 1000);
        sqlite3_bind_int64(query, 3, bucket_ms);
        returned = 0;
        while (sqlite3_step(query) == SQLITE_ROW) returned++;
        sqlite3_reset(query);
        double seconds = now() - begin;
        if (run > 0) printf("%s%.6f", run > 1 ? ", " : "", seconds);
    }
    printf("], \"days_returned\": %d}\n", returned);
    sqlite3_finalize(query);
    sqlite3_close(db);
    return 0;
}
