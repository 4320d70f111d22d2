#!/usr/bin/env bash
# Boots a QEMU guest with an emulated NVMe controller and the drivescope binary inside,
# runs drivescope and nvme-cli against the same controller, and splits the guest's
# answers into OUT_DIR/<section>.txt (plus OUT_DIR/console.log and OUT_DIR/rc/<section>).
# QEMU traces each Get Log Page and Get Features the NVMe controller is sent into
# OUT_DIR/nvme-trace.log (which commands reached the drive, and how often).
#
#   scripts/qemu-nvme/run.sh DRIVESCOPE_BIN [OUT_DIR]
#
# Installs what it needs with apt-get when missing, downloads Debian's linux-image package once into CACHE_DIR
# (default target/qemu-nvme/cache), uses KVM when /dev/kvm is usable, else TCG.
# Packages: qemu-system-x86 cpio busybox-static nvme-cli dmsetup smartmontools.
#
# WORKLOAD_CMD is the guest's workload on /dev/nvme0n1 (run while the telemetry poller
# watches); the default tries `drivescope run` and falls back to a direct-I/O dd read.
# NVME_ZONED=1 adds a controller with a zoned namespace (see below).
# NVME_SIZE and SATA_SIZE size the two disks (default 256M and 128M).
# KERNEL_APPEND adds to the guest kernel's command line (e.g. nvme.poll_queues=1: the
# prelude hands MODULE.PARAM=VALUE words to insmod, as modprobe would). QEMU_TRACE adds
# QEMU trace events (space-separated, e.g. "pci_nvme_read pci_nvme_write") to nvme-trace.log.
# QEMU_SMP: the guest's CPUs (default 1).
# GUEST_BINS: more programs (space-separated paths) copied into the guest's /usr/bin.
# GUEST_SCRIPT is the guest's /init (default guest-init.sh beside this script); every guest
# script sources guest-prelude.sh (mounts, modules, section()) as /prelude.sh.
# Optional tools (mdadm, lvm, blkid, mkswap, wipefs) are copied into the guest when the
# host has them; packages mdadm lvm2 util-linux are installed when missing, as root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:?usage: run.sh DRIVESCOPE_BIN [OUT_DIR]}
out=${2:-$repo/target/qemu-nvme/out}
cache=${CACHE_DIR:-$repo/target/qemu-nvme/cache}
boot_timeout=${BOOT_TIMEOUT:-}
guest_script=${GUEST_SCRIPT:-$here/guest-init.sh}
[ -f "$guest_script" ] || guest_script=$repo/$guest_script
default_workload="drivescope run --target /dev/nvme0n1 --rw randread --bs 4k --iodepth 8 --duration 3s --json || { echo 'guest: WORKLOAD FALLBACK: drivescope run failed or is not in this build; reading with dd instead'; dd if=/dev/nvme0n1 of=/dev/null bs=4k count=20000 iflag=direct; }"
WORKLOAD_CMD=${WORKLOAD_CMD:-$default_workload}

say() { echo "qemu-nvme: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

[ -x "$bin" ] || die "no executable at $bin"
[ -f "$guest_script" ] || die "no guest script at $guest_script"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
command -v cpio >/dev/null || need_pkgs+=(cpio)
dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)
command -v nvme >/dev/null || need_pkgs+=(nvme-cli)
command -v dmsetup >/dev/null || need_pkgs+=(dmsetup)
command -v smartctl >/dev/null || need_pkgs+=(smartmontools)
# Optional: the holders the write guard must see in the guest (md RAID, LVM).
command -v mdadm >/dev/null || need_pkgs+=(mdadm)
command -v lvm >/dev/null || need_pkgs+=(lvm2)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    say "installing ${need_pkgs[*]}"
    [ "$(id -u)" = 0 ] || die "need root to apt-get install ${need_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${need_pkgs[@]}" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${need_pkgs[@]}" >/dev/null; } ||
        say "apt-get install ${need_pkgs[*]} failed; going on with what is there"
    for t in qemu-system-x86_64 cpio nvme dmsetup smartctl; do
        command -v "$t" >/dev/null || die "$t is missing"
    done
    [ -x /bin/busybox ] || die "busybox-static is missing"
fi
busybox=/bin/busybox # busybox-static's: the guest has no libraries for it

# --- kernel: Debian's linux-image package, downloaded once -------------------------------
mkdir -p "$cache"
find_deb() { # the cached generic (not cloud, not rt) linux-image package, if any
    local f
    for f in "$cache"/linux-image-6.*-amd64_*.deb; do
        case "$f" in *-cloud-* | *-rt-*) continue ;; esac
        if [ -e "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 0
}
deb=$(find_deb)
if [ -z "$deb" ]; then
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6/{print $2; exit}')
    if [ -z "$pkg" ]; then
        apt-get update -q >/dev/null 2>&1 || true
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6/{print $2; exit}')
    fi
    [ -n "$pkg" ] || die "cannot find Debian's linux-image package name"
    say "downloading $pkg"
    (cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
    deb=$(find_deb)
    [ -n "$deb" ] || die "apt-get download $pkg left no package in $cache"
fi
kdir="$cache/kernel-$(basename "$deb" .deb)"
if [ ! -d "$kdir/boot" ]; then
    rm -rf "$kdir.tmp" && dpkg -x "$deb" "$kdir.tmp" && mv "$kdir.tmp" "$kdir"
fi
vmlinuz=$(find "$kdir/boot" -name 'vmlinuz-*' | head -n 1)
moddir=$(find "$kdir/lib/modules" -mindepth 2 -maxdepth 2 -name kernel -type d | head -n 1)
[ -n "$vmlinuz" ] && [ -n "$moddir" ] || die "no kernel or modules in $deb"

# --- initramfs ----------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/qemu-nvme.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,usr/bin,modules,proc,sys,dev,tmp,etc,lib,lib64}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
copy_with_libs() { # binary → /usr/bin/NAME, with every library ldd lists
    cp "$1" "$root/usr/bin/$2"
    ldd "$1" | grep -o '/[^ ]*' | while read -r lib; do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
copy_with_libs "$bin" drivescope
copy_with_libs "$(command -v nvme)" nvme
for b in ${GUEST_BINS:-}; do copy_with_libs "$b" "$(basename "$b")"; done
copy_with_libs "$(command -v dmsetup)" dmsetup
copy_with_libs "$(command -v smartctl)" smartctl
# Optional tools: the guest scripts check for them and say when one is missing.
for t in mdadm lvm blkid mkswap wipefs; do
    p=$(command -v "$t" || true)
    if [ -n "$p" ]; then copy_with_libs "$p" "$t"; fi
done
# e2fsprogs' mke2fs as mkfs.ext4 (busybox's mke2fs makes ext2 only: no extents, no fallocate).
if p=$(command -v mke2fs); then
    copy_with_libs "$p" mkfs.ext4
    if [ -f /etc/mke2fs.conf ]; then cp /etc/mke2fs.conf "$root/etc/"; fi
fi
order="crct10dif_common crct10dif_generic crc-t10dif crc64 crc64_rocksoft_generic crc64-rocksoft t10-pi nvme-core nvme dm-mod crc16 mbcache jbd2 crc32c_generic ext4 scsi_common scsi_mod sd_mod libata libahci ahci drivetemp"
# Faults and holders: dm-flakey and dm-delay (dm-error's "error" target is in dm-mod), md
# RAID1 (LVM needs only dm-mod).
order="$order dm-flakey dm-delay md-mod raid1 ${GUEST_MODULES:-}"
: >"$root/modules.order"
for m in $order; do
    f=$(find "$moddir" -name "$m.ko*" | head -n 1)
    [ -n "$f" ] || die "module $m not in $moddir"
    case "$f" in
        *.ko.xz) xz -dc "$f" >"$root/modules/$m.ko" ;;
        *.ko.zst) zstd -qdc "$f" >"$root/modules/$m.ko" ;;
        *) cp "$f" "$root/modules/$m.ko" ;;
    esac
    echo "$m" >>"$root/modules.order"
done
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
printf 'WORKLOAD_CMD=%q\n' "$WORKLOAD_CMD" >"$root/workload.conf"
printf 'NVME_SECOND=%q\n' "${NVME_SECOND:-}" >>"$root/workload.conf"
printf 'NVME_ZONED=%q\n' "${NVME_ZONED:-}" >>"$root/workload.conf"
install -m 0644 "$here/guest-prelude.sh" "$root/prelude.sh"
install -m 0755 "$guest_script" "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
truncate -s "${NVME_SIZE:-256M}" "$work/disk.img"
# NVME_SECOND=1: a second NVMe controller (serial TEST0002, 64M namespace) for runs on
# several drives.
second_nvme=()
if [ -n "${NVME_SECOND:-}" ]; then
    truncate -s 64M "$work/disk2.img"
    second_nvme=(-drive file="$work/disk2.img",if=none,id=nv1,format=raw
        -device nvme,serial=TEST0002,drive=nv1)
fi
truncate -s "${SATA_SIZE:-128M}" "$work/sata.img"
# NVME_ZONED=1: a third NVMe controller (serial ZNS00001) whose namespace is zoned (ZNS):
# 64 MiB in 16 zones of 4 MiB, at most 4 open and 6 active.
zoned_nvme=()
if [ -n "${NVME_ZONED:-}" ]; then
    truncate -s 64M "$work/zns.img"
    zoned_nvme=(-device nvme,id=nvmez,serial=ZNS00001
        -drive file="$work/zns.img",if=none,id=nvz,format=raw
        -device nvme-ns,drive=nvz,bus=nvmez,nsid=1,zoned=true,zoned.zone_size=4M,zoned.max_open=4,zoned.max_active=6)
fi

# --- boot ---------------------------------------------------------------------------------
# KVM when /dev/kvm works (-arch-capabilities: nested KVM refuses that MSR), else TCG; a
# KVM boot that shows no progress in 15 s (some nested hosts hang) is retried under TCG,
# which takes about 15 s here. QEMU_NVME_ACCEL=tcg or kvm forces one.
# A host whose KVM hung once hangs every time until it reboots: that is remembered for
# this boot of the host (its boot_id), so the next guests go straight to TCG.
kvm_hangs="$cache/kvm-hangs"
host_boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
accels=(tcg)
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accels=(kvm tcg); fi
if [ "$(cat "$kvm_hangs" 2>/dev/null)" = "$host_boot" ]; then
    accels=(tcg)
    say "KVM hung on this host since it booted ($kvm_hangs): TCG"
fi
case "${QEMU_NVME_ACCEL:-}" in
    tcg) accels=(tcg) ;;
    kvm) accels=(kvm) ;;
esac
mkdir -p "$out"
rm -rf "$out"/*.txt "$out/rc" "$out/nvme-trace.log"
mkdir -p "$out/rc"
extra_trace=()
for ev in ${QEMU_TRACE:-}; do extra_trace+=(-trace "$ev"); done
boot() { # boot ACCEL TIMEOUT PROGRESS_DEADLINE → qemu's exit code (124: timed out)
    local cpu=max
    [ "$1" = kvm ] && cpu=host,-arch-capabilities
    qemu-system-x86_64 -accel "$1" -cpu "$cpu" -m 1024 -smp "${QEMU_SMP:-1}" \
        -nographic -no-reboot -kernel "$vmlinuz" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check ${KERNEL_APPEND:-}" \
        -drive file="$work/disk.img",if=none,id=nv0,format=raw \
        -device nvme,serial=TEST0001,drive=nv0 "${second_nvme[@]}" "${zoned_nvme[@]}" \
        -device ahci,id=ahci -drive file="$work/sata.img",if=none,id=sata0,format=raw \
        -device ide-hd,drive=sata0,bus=ahci.0,serial=SATA0001 \
        -trace pci_nvme_get_log -trace pci_nvme_getfeat "${extra_trace[@]}" -D "$out/nvme-trace.log" \
        </dev/null >"$out/console.log" 2>&1 &
    local pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge "$2" ] ||
            { [ "$waited" -ge "$3" ] && ! grep -q '=== BEGIN' "$out/console.log"; }; then
            kill "$pid" 2>/dev/null
            sleep 1
            kill -9 "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 1
        waited=$((waited + 1))
    done
    wait "$pid"
}
qrc=1
for accel in "${accels[@]}"; do
    # A bound on a guest that hangs, not a wait: a TCG guest on a loaded machine may take
    # many minutes, and finishing is what is waited for.
    t=${boot_timeout:-1200}
    # Under KVM the guest's init starts within seconds; no sign of it in 15 s means this
    # host's KVM cannot run the guest (seen with nested KVM), so go on to TCG.
    progress=$t
    [ "$accel" = kvm ] && progress=15
    say "booting ($accel, timeout ${t}s)"
    set +e
    boot "$accel" "$t" "$progress"
    qrc=$?
    set -e
    tr -d '\r' <"$out/console.log" >"$out/console.clean.log"
    grep -q '^=== ALL DONE ===$' "$out/console.clean.log" && break
    if [ "$accel" = kvm ] && [ $qrc -eq 124 ] && ! grep -q '=== BEGIN' "$out/console.log"; then
        echo "$host_boot" >"$kvm_hangs.$$" && mv "$kvm_hangs.$$" "$kvm_hangs"
    fi
    say "$accel boot did not finish (qemu exit $qrc): $(grep -m1 -i error "$out/console.clean.log" || true)"
done
awk -v dir="$out" '
    /^=== BEGIN [a-z_]+ ===$/ { name = $3; file = dir "/" name ".txt"; printf "" > file; next }
    /^=== END [a-z_]+ rc=[0-9]+ ===$/ { split($4, a, "="); print a[2] > (dir "/rc/" $3); close(file); name = ""; next }
    name != "" { print >> file }
' "$out/console.clean.log"
grep -q '^=== ALL DONE ===$' "$out/console.clean.log" || {
    tail -n 40 "$out/console.clean.log" >&2
    [ $qrc -eq 124 ] && die "guest did not finish in time (console: $out/console.log)"
    die "guest stopped early, qemu exit $qrc (console: $out/console.log)"
}
say "guest finished; sections in $out"
