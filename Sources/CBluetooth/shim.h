// CBluetooth: Debian's libbluetooth (libbluetooth-dev), to ask controllers directly over HCI
// when bluetoothd does not answer (wearhouse doctor).
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
