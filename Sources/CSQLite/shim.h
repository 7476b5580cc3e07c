// CSQLite: Debian's libsqlite3 (libsqlite3-dev). Only the real header; variadic wrappers go here when needed.
#include <sqlite3.h>
