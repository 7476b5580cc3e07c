// CUdev: Debian's libudev (libudev-dev), to name Bluetooth adapters and notice hot-plug.
#include <libudev.h>
