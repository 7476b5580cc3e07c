// CLibPQ: Debian's libpq (libpq-dev), the PostgreSQL client library, headers only. Nothing links libpq: PostgresStore
// opens libpq.so.5 at run time (Sources/PostgresStore/PostgresLibrary.swift) and calls it through the table below,
// whose every field is typed from libpq-fe.h's own declaration of that function, so that the compiler checks each
// call against the header.
//
// The module map has no `link` and Package.swift gives this target no `pkgConfig`: SwiftPM adds the `--libs` of a
// system library's pkg-config package (`-lpq`) to every product that depends on it. The header is found without
// pkg-config's `-I/usr/include/postgresql`: included as <postgresql/libpq-fe.h> from the default /usr/include, it
// includes its neighbours (postgres_ext.h, pg_config_ext.h) with quotes, which finds them next to it.
#include <dlfcn.h>
#include <postgresql/libpq-fe.h>

// The libpq functions PostgresStore calls: X(name) stands for PQname, once each.
#define WEARHOUSE_LIBPQ_FUNCTIONS(X)                                                                                   \
    X(connectdb)                                                                                                       \
    X(status)                                                                                                          \
    X(errorMessage)                                                                                                    \
    X(finish)                                                                                                          \
    X(exec)                                                                                                            \
    X(prepare)                                                                                                         \
    X(execPrepared)                                                                                                    \
    X(resultStatus)                                                                                                    \
    X(ntuples)                                                                                                         \
    X(getvalue)                                                                                                        \
    X(getisnull)                                                                                                       \
    X(getlength)                                                                                                       \
    X(clear)                                                                                                           \
    X(cmdTuples)                                                                                                       \
    X(resultErrorField)                                                                                                \
    X(resultErrorMessage)                                                                                              \
    X(putCopyData)                                                                                                     \
    X(putCopyEnd)                                                                                                      \
    X(getResult)                                                                                                       \
    X(getCopyData)                                                                                                     \
    X(escapeIdentifier)                                                                                                \
    X(escapeLiteral)                                                                                                   \
    X(freemem)                                                                                                         \
    X(libVersion)                                                                                                      \
    X(serverVersion)                                                                                                   \
    X(setNoticeProcessor)

#pragma clang assume_nonnull begin

// A pointer to each of those functions, field `name` of the type of `&PQname`. Swift sees each field as a
// non-optional `@convention(c)` function: a table exists only once every function was found.
typedef struct {
#define WEARHOUSE_LIBPQ_FIELD(name) __typeof__(&PQ##name) name;
    WEARHOUSE_LIBPQ_FUNCTIONS(WEARHOUSE_LIBPQ_FIELD)
#undef WEARHOUSE_LIBPQ_FIELD
} WearhouseLibPQ;

// The number of functions in the table.
static const int WearhouseLibPQFunctionCount = 0
#define WEARHOUSE_LIBPQ_ONE(name) +1
    WEARHOUSE_LIBPQ_FUNCTIONS(WEARHOUSE_LIBPQ_ONE)
#undef WEARHOUSE_LIBPQ_ONE
    ;

// PQresultErrorField's field codes used (character constants, which Swift does not import as macros).
static const int WearhouseLibPQFieldSQLState = PG_DIAG_SQLSTATE;
static const int WearhouseLibPQFieldMessage = PG_DIAG_MESSAGE_PRIMARY;

// Looks every function up in `library` (a dlopen handle) with dlsym and stores it in `table`. Returns how many
// are missing and puts their names in `missing` (room for WearhouseLibPQFunctionCount); `table` is complete
// only when none is, and its missing fields are left untouched.
static inline int WearhouseLibPQLoad(
    void *library, WearhouseLibPQ *table, const char *_Nullable *_Nonnull missing) {
    int absent = 0;
    void *_Nullable found;
#define WEARHOUSE_LIBPQ_LOOKUP(name)                                                                                   \
    found = dlsym(library, "PQ" #name);                                                                                \
    if (found) {                                                                                                       \
        table->name = (__typeof__(&PQ##name))found;                                                                    \
    } else {                                                                                                           \
        missing[absent++] = "PQ" #name;                                                                                \
    }
    WEARHOUSE_LIBPQ_FUNCTIONS(WEARHOUSE_LIBPQ_LOOKUP)
#undef WEARHOUSE_LIBPQ_LOOKUP
    return absent;
}

#pragma clang assume_nonnull end
