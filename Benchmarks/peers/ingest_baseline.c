/* Peer for the `ingest` benchmark: the plain-SQLite limit. One row per sample with a time-ordered key,
 * inserted in batches of 1,000 per transaction, WAL + synchronous=FULL (the same durability as wearhouse).
 *
 * Usage: ingest_baseline DATA DB [normal]. DATA has one "start_ms,value" line per sample (the harness writes it);
 * with `normal`, synchronous=NORMAL (commits not flushed to the disk: what the program costs without the disk's
 * flushes). Prints {"samples": n, "seconds": s, "bytes": size of DB + WAL}.
 */
#include <string.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

int main(int argc, char **argv) {
    int normal = argc == 4 && strcmp(argv[3], "normal") == 0;
    if (argc != 3 && !normal) { fprintf(stderr, "usage: ingest_baseline DATA DB [normal]\n"); return 64; }
    FILE *in = fopen(argv[1], "r");
    if (!in) { perror(argv[1]); return 66; }
    long long *starts = NULL; double *values = NULL; size_t n = 0, cap = 0;
    long long start; double value;
    while (fscanf(in, "%lld,%lf", &start, &value) == 2) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            starts = realloc(starts, cap * sizeof *starts);
            values = realloc(values, cap * sizeof *values);
            if (!starts || !values) return 70;
        }
        starts[n] = start; values[n] = value; n++;
    }
    fclose(in);

    sqlite3 *db;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
    sqlite3_exec(db, normal ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                            : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, NULL);
    sqlite3_exec(db, "CREATE TABLE sample (id INTEGER PRIMARY KEY, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,"
                     " type_id INTEGER NOT NULL, source_id INTEGER NOT NULL, device_id INTEGER NOT NULL,"
                     " value REAL NOT NULL);", NULL, NULL, NULL);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO sample (id, start_ms, end_ms, type_id, source_id, device_id, value)"
                           " VALUES (?1, ?2, ?2, 1, 1, 1, ?3)", -1, &insert, NULL);
    double begin = now();
    for (size_t i = 0; i < n; i++) {
        if (i % 1000 == 0) sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        /* time-ordered key: the start in ms shifted left, plus a counter, like a v7 UUID's prefix */
        sqlite3_bind_int64(insert, 1, (sqlite3_int64)((starts[i] << 8) | (long long)(i & 0xFF)));
        sqlite3_bind_int64(insert, 2, starts[i]);
        sqlite3_bind_double(insert, 3, values[i]);
        if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "%s\n", sqlite3_errmsg(db)); return 74; }
        sqlite3_reset(insert);
        if (i % 1000 == 999 || i == n - 1) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    double seconds = now() - begin;
    sqlite3_finalize(insert);
    sqlite3_close(db);
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", argv[2]);
    printf("{\"samples\": %zu, \"seconds\": %.6f, \"bytes\": %lld}\n", n, seconds, file_size(argv[2]) + file_size(wal));
    free(starts); free(values);
    return 0;
}
