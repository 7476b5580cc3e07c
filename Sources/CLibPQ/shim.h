// CLibPQ: Debian's libpq (libpq-dev), the PostgreSQL client library.
#include <libpq-fe.h>
