#!/bin/bash
# Prepares this machine for the BlueZ VM rig (docs/bluez-vm.md). Idempotent: a second run only checks.
#
# - Debian packages: qemu (TCG is enough, no KVM), btvirt (bluez-test-tools), a static busybox and cpio for
#   the initramfs, kmod for depmod/modprobe. bluez, dbus-daemon and util-linux come from the Makefile's
#   DEB_PACKAGES.
# - The kernel: Debian's linux-image-<version>-amd64 .deb is downloaded (not installed: no initramfs or boot
#   loader hooks run on this machine) and only vmlinuz plus the modules Bluetooth, 9p and virtio need are
#   unpacked (about 25 MB). linux-image-cloud-amd64 is no use: its kernel has no Bluetooth.
# - The initramfs (busybox + the modules to load, in dependency order), built by mkinitrd.sh.
#
# Everything goes to $BVM_KERNEL_DIR (default .build/bluez-vm/kernel in the repository).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${BVM_KERNEL_DIR:-$ROOT/.build/bluez-vm/kernel}
mkdir -p "$KDIR"
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
T0=$SECONDS

PACKAGES="qemu-system-x86 bluez bluez-test-tools busybox-static cpio kmod dbus-daemon util-linux"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup-host: installing$missing"
    $SUDO apt-get update -q
    # Another apt may hold the lock (a shared machine): wait for it rather than fail.
    $SUDO apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $missing
fi

# The kernel package linux-image-amd64 points at now (BVM_KERNEL_PACKAGE pins another).
kernel_package() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'; }
KPKG=${BVM_KERNEL_PACKAGE:-$(kernel_package)}
if [ -z "$KPKG" ]; then $SUDO apt-get update -q; KPKG=$(kernel_package); fi
[ -n "$KPKG" ] || { echo "setup-host: cannot tell which linux-image package linux-image-amd64 depends on" >&2; exit 2; }
KV=${KPKG#linux-image-}
MODROOT=$KDIR/modroot-$KV
if [ ! -s "$KDIR/vmlinuz-$KV" ] || [ ! -s "$MODROOT/lib/modules/$KV/modules.dep" ]; then
    echo "setup-host: fetching $KPKG"
    DL=$(mktemp -d "$KDIR/download.XXXX")
    ( cd "$DL" && apt-get download -q "$KPKG" ) || { $SUDO apt-get update -q; ( cd "$DL" && apt-get download -q "$KPKG" ); }
    rm -rf "$MODROOT"; mkdir -p "$MODROOT"
    M=./lib/modules/$KV
    # Only what the guest loads or may autoload: Bluetooth and its crypto (SMP, bluetoothd's AF_ALG), rfkill,
    # uhid/uinput (bluetoothd's input plugins), 9p over virtio (the shared host root and output directory).
    dpkg-deb --fsys-tarfile "$DL"/*.deb | tar -x -C "$MODROOT" --wildcards \
        "./boot/vmlinuz-$KV" "$M/modules.order" "$M/modules.builtin*" \
        "$M/kernel/crypto" "$M/kernel/lib" "$M/kernel/arch/x86/crypto" \
        "$M/kernel/net/bluetooth" "$M/kernel/drivers/bluetooth" "$M/kernel/net/rfkill" \
        "$M/kernel/drivers/hid/uhid.ko" "$M/kernel/drivers/input/misc/uinput.ko" \
        "$M/kernel/fs/9p" "$M/kernel/net/9p" "$M/kernel/drivers/virtio" "$M/kernel/fs/netfs" "$M/kernel/fs/fscache"
    mv "$MODROOT/boot/vmlinuz-$KV" "$KDIR/vmlinuz-$KV"
    rmdir "$MODROOT/boot"
    depmod -b "$MODROOT" "$KV"
    rm -rf "$DL"
fi

# What the initramfs loads, dependencies first. The order matters (docs/bluez-vm.md, "pitfalls"):
# - drbg (and its entropy source) before anything that pulls in ecdh_generic, whose self-test needs a random
#   number generator: without it LE Secure Connections pairing is impossible;
# - the AF_ALG hashes and ciphers btvirt binds when it creates its controllers, and bnep/rfcomm that
#   bluetoothd's plugins open at start: loading them on demand under TCG takes longer than the kernel's 2 s
#   HCI_Reset timeout of a new virtual controller.
for m in virtio_pci 9pnet_virtio 9p jitterentropy_rng drbg af_alg algif_hash algif_skcipher ecb cmac \
    bluetooth hci_vhci bnep rfcomm; do
    modprobe -d "$MODROOT" -S "$KV" --show-depends "$m" | awk '/^insmod/ { print $2 }'
done | awk '!seen[$0]++' | sed "s|^$MODROOT/||" > "$MODROOT/load-order.new"
# Replaced only when it changed, so that the initramfs below is rebuilt only then.
if cmp -s "$MODROOT/load-order.new" "$MODROOT/load-order"; then rm "$MODROOT/load-order.new"
else mv "$MODROOT/load-order.new" "$MODROOT/load-order"; fi

# The guest's kernel.modprobe: autoloads from this module tree (the host has no such kernel installed).
printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$MODROOT" > "$KDIR/modprobe"
chmod +x "$KDIR/modprobe"

if [ ! -s "$KDIR/initrd-$KV.img" ] || [ "$HERE/mkinitrd.sh" -nt "$KDIR/initrd-$KV.img" ] \
    || [ "$MODROOT/load-order" -nt "$KDIR/initrd-$KV.img" ]; then
    KV=$KV MODROOT=$MODROOT OUT=$KDIR/initrd-$KV.img "$HERE/mkinitrd.sh"
fi
echo "$KV" > "$KDIR/kernel-version"
echo "setup-host: kernel $KV ready in $KDIR ($(du -sh "$KDIR" | cut -f1)), $((SECONDS - T0)) s"
