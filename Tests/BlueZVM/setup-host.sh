#!/bin/bash
# Prepares this machine for the BlueZ VM rig (docs/bluez-vm.md). Idempotent: a second run only checks.
#
# - Debian packages: qemu (TCG is enough, no KVM), btvirt (bluez-test-tools), a static busybox and cpio for
#   the initramfs, kmod for depmod/modprobe. bluez, dbus-daemon and util-linux come from the Makefile's
#   DEB_PACKAGES.
# - The kernel: Debian's linux-image-<version>-amd64 .deb from bookworm-backports (6.12 when this was written;
#   BVM_KERNEL_SUITE=bookworm takes the release's 6.1, whose Bluetooth oopsed in hci_chan_del at reconnections,
#   docs/bluez-vm.md), looked up through a private apt configuration under the kernel directory (this machine's
#   apt sources are left alone) and downloaded, not installed: no initramfs or boot loader hooks run here. Only
#   vmlinuz and the modules Bluetooth, 9p and virtio need are unpacked (decompressed: the initramfs' busybox
#   insmod reads plain .ko). linux-image-cloud-amd64 is no use: its kernel has no Bluetooth.
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

PACKAGES="qemu-system-x86 bluez bluez-test-tools busybox-static cpio kmod xz-utils debian-archive-keyring dbus-daemon util-linux"
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

# The kernel package linux-image-amd64 points at now in BVM_KERNEL_SUITE (BVM_KERNEL_PACKAGE pins another), from
# a private apt configuration: its package lists live in $KDIR/apt, fetched once (again when a lookup fails).
SUITE=${BVM_KERNEL_SUITE:-bookworm-backports}
APTDIR=$KDIR/apt
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
{
    echo "deb [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main"
    # The release's kernel is updated through the security archive.
    case $SUITE in *-*) ;; *) echo "deb [signed-by=$KEYRING] http://deb.debian.org/debian-security $SUITE-security main";; esac
} > "$APTDIR/sources.list.new"
# A changed suite invalidates the lists fetched for the old one.
cmp -s "$APTDIR/sources.list.new" "$APTDIR/sources.list" || rm -f "$APTDIR/lists/"*_Packages* "$APTDIR/lists/"*Release*
mv "$APTDIR/sources.list.new" "$APTDIR/sources.list"
APT_OPTIONS=(-o "Dir::Etc::SourceList=$APTDIR/sources.list" -o "Dir::Etc::SourceParts=$APTDIR/none"
    -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache" -o "Dir::State::status=/dev/null"
    -o "APT::Sandbox::User=root")
apt_update() { apt-get "${APT_OPTIONS[@]}" update -q > "$APTDIR/update.log" 2>&1 || { cat "$APTDIR/update.log" >&2; return 1; }; }
kernel_package() {
    apt-cache "${APT_OPTIONS[@]}" depends linux-image-amd64 2>/dev/null \
        | awk '/Depends: linux-image-[0-9]/ { print $2; exit }' || true
}
KPKG=${BVM_KERNEL_PACKAGE:-$(kernel_package)}
if [ -z "$KPKG" ]; then apt_update; KPKG=$(kernel_package); fi
[ -n "$KPKG" ] || { echo "setup-host: cannot tell which linux-image package linux-image-amd64 depends on in $SUITE" >&2; exit 2; }
KV=${KPKG#linux-image-}
MODROOT=$KDIR/modroot-$KV
if [ ! -s "$KDIR/vmlinuz-$KV" ] || [ ! -s "$MODROOT/lib/modules/$KV/modules.dep" ]; then
    echo "setup-host: fetching $KPKG ($SUITE)"
    DL=$(mktemp -d "$KDIR/download.XXXX")
    ( cd "$DL" && apt-get "${APT_OPTIONS[@]}" download -q "$KPKG" ) \
        || { apt_update; ( cd "$DL" && apt-get "${APT_OPTIONS[@]}" download -q "$KPKG" ); }
    rm -rf "$MODROOT"; mkdir -p "$MODROOT"
    M=./lib/modules/$KV
    # Only what the guest loads or may autoload: Bluetooth and its crypto (SMP, bluetoothd's AF_ALG), rfkill,
    # uhid/uinput (bluetoothd's input plugins), 9p over virtio (the shared host root and output directory). Some
    # of these are built in, or gone, in one kernel or another: only the paths the package has are asked for.
    dpkg-deb -c "$DL"/*.deb | awk '{ print $6 }' > "$DL/contents"
    members=("./boot/vmlinuz-$KV")
    for path in modules.order modules.builtin modules.builtin.modinfo kernel/crypto kernel/lib \
        kernel/arch/x86/crypto kernel/net/bluetooth kernel/drivers/bluetooth kernel/net/rfkill \
        kernel/drivers/hid/uhid.ko kernel/drivers/input/misc/uinput.ko kernel/fs/9p kernel/net/9p \
        kernel/drivers/virtio kernel/fs/netfs kernel/fs/fscache; do
        for member in "$M/$path" "$M/$path/" "$M/$path.xz"; do
            grep -qxF "$member" "$DL/contents" && { members+=("$member"); break; }
        done
    done
    dpkg-deb --fsys-tarfile "$DL"/*.deb | tar -x -C "$MODROOT" "${members[@]}"
    mv "$MODROOT/boot/vmlinuz-$KV" "$KDIR/vmlinuz-$KV"
    rmdir "$MODROOT/boot"
    find "$MODROOT" -name '*.ko.xz' -exec xz -d {} +
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
