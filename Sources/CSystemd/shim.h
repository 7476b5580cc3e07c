// CSystemd: Debian's libsystemd (libsystemd-dev): sd-bus for D-Bus, sd-daemon for sd_notify, sd-journal.
// sd_bus_call_method and friends are variadic and cannot be called from Swift; the BlueZ module builds
// messages with the non-variadic sd_bus_message_* calls instead.
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
