// CLibXML2: Debian's libxml2 (libxml2-dev), for its SAX2 push parser (a streaming pull reader is built on it) and its
// text writer (GPX). Only Sources/HealthImports/XMLPullReader.swift and GPXWriter.swift use it.
//
// Debian builds libxml2 with ICU, and <libxml/encoding.h> then includes ICU's headers, whose enums clash with the
// copy of ICU that Foundation carries. Nothing here uses ICU (the only declarations it changes are the trailing
// converter pointers of xmlCharEncodingHandler, which Swift never touches), so the ICU part is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
#include <libxml/parserInternals.h>
#include <libxml/hash.h>
#include <libxml/tree.h>
#include <libxml/xmlwriter.h>
