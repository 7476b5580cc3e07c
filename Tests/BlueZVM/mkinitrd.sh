#!/bin/bash
# Builds the guest's initramfs: a static busybox and the modules of $MODROOT/load-order. Its /init loads them,
# mounts the host's root (9p tag "hostroot", read-only), moves /proc, /sys and /dev there and chroots into it to
# run the script given on the kernel command line as wearhouse.init= (run-vm.sh passes guest-init.sh).
# Called by setup-host.sh with KV, MODROOT and OUT set.
set -euo pipefail
: "${KV:?}" "${MODROOT:?}" "${OUT:?}"
[ -s "$MODROOT/load-order" ] || { echo "mkinitrd: no $MODROOT/load-order" >&2; exit 2; }
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/host" "$R/modules"
cp /bin/busybox "$R/bin/busybox"
for applet in sh mount insmod cat echo sleep chroot; do ln -s busybox "$R/bin/$applet"; done
while read -r module; do
    cp "$MODROOT/$module" "$R/modules/"
    basename "$module"
done < "$MODROOT/load-order" > "$R/modules/load-order"
cat > "$R/init" <<'INIT'
#!/bin/sh
# PID 1 until the chroot: modules, then the host root.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules/load-order); do insmod "/modules/$m" || echo "initramfs: insmod $m failed"; done
fail() { echo "initramfs: $*"; echo o > /proc/sysrq-trigger; sleep 10; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host || fail "no host root"
script=""
for a in $(cat /proc/cmdline); do case "$a" in wearhouse.init=*) script="${a#wearhouse.init=}";; esac; done
[ -n "$script" ] || fail "no wearhouse.init= on the kernel command line"
mount --move /proc /host/proc
mount --move /sys /host/sys
mount --move /dev /host/dev
exec chroot /host /bin/sh "$script"
INIT
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
echo "mkinitrd: $OUT ($(du -h "$OUT" | cut -f1), $(wc -l < "$MODROOT/load-order") modules)"
