// CLibZip: Debian's libzip (libzip-dev), to list a zip archive and stream one entry in place. Only
// Sources/HealthImports/ZipArchive.swift uses it.
#include <zip.h>
