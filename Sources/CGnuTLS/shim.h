// CGnuTLS: Debian's GnuTLS (libgnutls28-dev), for the one thing the web app takes from it directly: PBKDF2 for the
// LAN password (Sources/HealthWeb/PasswordHash.swift). libmicrohttpd speaks TLS through the same library.
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
