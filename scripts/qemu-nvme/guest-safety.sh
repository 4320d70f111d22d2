#!/bin/sh
# /init of the safety guest (GUEST_SCRIPT=scripts/qemu-nvme/guest-safety.sh): faults and
# holders on the NVMe namespace and the SATA disk (NVME_SIZE=128M SATA_SIZE=64M).
#   eio_*    a device-mapper table switched mid-run to half linear / half `error`, then all
#            `error`; dm-flakey up 3 s / down 1 s
#   verify_* data verification through device-mapper: writes dm-flakey drops
#            (drop_writes) read back as lost writes; dm-error's failures are I/O errors
#   stall_*  dm-delay switched in mid-run (3 s); SIGINT while every I/O waits 60 s; a 2 s
#            run whose duration ends while every I/O waits
#   fullfs_* a test file that does not fit (ext4, fallocate), a fill that hits a full ext2,
#            writes into a sparse file on a full filesystem
#   refuse_* writes refused by the guard, each with sha256sum of the whole disk before and
#            after: partition table, device-mapper, mounted, LVM, swap, md RAID1
#   gone_*   the SATA disk deleted mid-run, then the NVMe controller removed from PCI
# Every section prints its commands' output; tests/qemu/qemu_safety.rs checks it.
. /prelude.sh

export HOME=/tmp/home DM_DISABLE_UDEV=1
mkdir -p "$HOME" /tmp/s /etc/lvm /run/lock/lvm /mnt/a /mnt/b
nv=/dev/nvme0n1
nvsz=$(blockdev --getsz $nv)
half=$((nvsz / 2))

# many_*: one run on three drives (two NVMe controllers, the SATA disk), reads only, before
# anything below changes them; its session is printed whole.
if [ -e /dev/nvme1n1 ]; then
    section many_run drivescope run --target /dev/nvme0n1 --target /dev/nvme1n1 --target /dev/sda \
        --rw randread --bs 4k --iodepth 4 --duration 5s --json --session /tmp/many.yaml
    section many_session cat /tmp/many.yaml
fi

# soak_*: a short thermal soak on the NVMe namespace (QEMU's composite temperature does not
# move: steady once the window is full), then its cool-down (already at the start).
cat >/tmp/soak.yaml <<'SOAK'
id: soak-guest
name: A short soak in the guest
description: the thermal-soak rules on QEMU's NVMe controller, in seconds
phases:
  - name: soak
    workload: {rw: write, bs: 128k, iodepth: 8, jobs: 1}
    end:
      duration: 40s
      temperature: {slope: 0.5C, window: 4s}
      throttled: 10s
  - name: cool-down
    workload: idle
    end: {duration: 20s, cooled: 1C}
SOAK
section soak_run drivescope run --target /dev/nvme0n1 --destroy-data /dev/nvme0n1 \
    --preset-file /tmp/soak.yaml --json --session /tmp/soak-session.yaml
up() { cut -d' ' -f1 /proc/uptime; }
dms() { dmsetup --noudevsync "$@"; }
# table NAME: swaps in the table read from stdin (suspend, reload, resume).
table() { dms suspend "$1" && dms reload "$1" && dms resume "$1"; }
# stamp NAME: copies stdin to /tmp/NAME.out and, for each line, the uptime when it came
# and its first 40 characters to /tmp/NAME.times.
stamp() {
    : >"/tmp/$1.out"
    : >"/tmp/$1.times"
    while IFS= read -r l; do
        printf "%s\n" "$l" >>"/tmp/$1.out"
        echo "$(up) $(echo "$l" | cut -c1-40)" >>"/tmp/$1.times"
    done
}
# bg NAME ARGS...: `drivescope run ARGS --json --session /tmp/s/NAME.yaml` in the
# background, its output stamped (see stamp); drivescope's pid in $pid.
bg() {
    n=$1
    shift
    rm -f "/tmp/$n.fifo" && mkfifo "/tmp/$n.fifo"
    stamp "$n" <"/tmp/$n.fifo" &
    stamp_pid=$!
    drivescope run "$@" --json --session "/tmp/s/$n.yaml" >"/tmp/$n.fifo" 2>&1 &
    pid=$!
}
# started NAME: waits until the run has printed its first interval (it is past its checks
# and its I/O is going), 120 s at most: a state, not a time, so that a guest slowed by a
# loaded host still acts mid-run.
started() {
    i=0
    while ! grep -q '"type":"interval"' "/tmp/$1.out" 2>/dev/null && [ $i -lt 1200 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    echo "guest: $1 running at $(up)"
}
# finish NAME: waits for the run, prints its output, exit code and the uptime at which
# it ended; returns the exit code.
finish() {
    wait "$pid"
    rc=$?
    t_exit=$(up)
    wait "$stamp_pid"
    cat "/tmp/$1.out"
    echo "exit=$rc"
    echo "exited_at=$t_exit"
    sed 's/^/line_at=/' "/tmp/$1.times"
    return $rc
}
session() { [ -f "/tmp/s/$1.yaml" ] && cat "/tmp/s/$1.yaml" || echo "no session at /tmp/s/$1.yaml"; }
have() { command -v "$1" >/dev/null 2>&1; }
tools() { for t in dmsetup mdadm lvm blkid mkswap mkfs.ext4 sha256sum; do have $t && echo "$t yes" || echo "$t no"; done; }
section tools tools

# --- a. EIO mid-run ------------------------------------------------------------------------
echo "0 $nvsz linear $nv 0" | dms create flaky
bg eio --target /dev/mapper/flaky --rw randread --bs 4k --iodepth 8 --rate-iops 2000 \
    --duration 20s --interval 500ms
started eio
sleep 2
printf '0 %s linear %s 0\n%s %s error\n' $half $nv $half $((nvsz - half)) | table flaky
echo "guest: switched the upper half to error at $(up)"
section eio_run finish eio
section eio_session session eio
echo "0 $nvsz error" | table flaky
bg eio_all --target /dev/mapper/flaky --rw randread --bs 4k --iodepth 8 --duration 30s \
    --interval 500ms
section eio_all_run finish eio_all
section eio_all_session session eio_all
dms remove flaky
# dm-flakey: up 3 s, down 1 s (reads fail while down); 2 s intervals always see some good
# reads, so the run goes on and counts the errors.
echo "0 $nvsz flakey $nv 0 3 1" | dms create flakey
bg eio_flakey --target /dev/mapper/flakey --rw randread --bs 4k --iodepth 8 --rate-iops 1000 \
    --duration 8s --interval 2s
section eio_flakey_run finish eio_flakey
dms remove flakey

# --- verify_*: a verified write pass over 2 MiB of a linear table (one pass by its bytes,
# however slow the guest), then the table swapped
# for dm-flakey dropping every write (up 0 s, down 1000 s, drop_writes: acknowledged, never
# written) and a second pass; `verify` finds the second pass's writes lost. Then all
# `error`: `verify` counts I/O errors, no finding.
vs=/tmp/verify-state
vrun() {
    drivescope run --target /dev/mapper/vdm --destroy-data /dev/mapper/vdm --rw write --bs 4k \
        --iodepth 8 --size 2M --io-size 2M --duration 600s --verify --verify-state $vs --json "$@"
}
echo "0 $nvsz linear $nv 0" | dms create vdm
section verify_write vrun --verify-reset
echo "0 $nvsz flakey $nv 0 0 1000 1 drop_writes" | table vdm
section verify_dropped vrun
section verify_lost drivescope verify --target /dev/mapper/vdm --size 2M --verify-state $vs --json
echo "0 $nvsz error" | table vdm
section verify_eio drivescope verify --target /dev/mapper/vdm --size 2M --verify-state $vs --json
dms remove vdm

# --- b. stalls -------------------------------------------------------------------------------
echo "0 $nvsz linear $nv 0" | dms create slow
bg stall --target /dev/mapper/slow --rw randread --bs 4k --iodepth 4 --rate-iops 500 \
    --duration 8s --interval 500ms
started stall
sleep 1.5
echo "0 $nvsz delay $nv 0 3000" | table slow
t_on=$(up)
echo "guest: delay 3000 ms from $t_on"
sleep 3
t_off=$(up)
echo "0 $nvsz linear $nv 0" | table slow
echo "guest: linear again at $(up)"
section stall_run finish stall
echo "=== BEGIN stall_window ==="
echo "on_s=$t_on"
echo "off_s=$t_off"
echo "=== END stall_window rc=0 ==="
# Every read now waits 60 s: far longer than any run below may take, however slowly a
# loaded host runs the guest, so that "it did not wait for its reads" is a bound that holds.
echo "0 $nvsz delay $nv 0 60000" | table slow
bg stall_int --target /dev/mapper/slow --rw randread --bs 4k --iodepth 4 --duration 60s \
    --interval 500ms
started stall_int
sleep 1
t0=$(up)
kill -INT $pid
section stall_int_run finish stall_int
t1=$(up)
echo "=== BEGIN stall_int_timing ==="
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "sigint_to_exit_s=%.2f\n", b - a }'
echo "=== END stall_int_timing rc=0 ==="
section stall_int_session session stall_int
# The duration ends while every read still waits: the run ends about a second later anyway.
t0=$(up)
bg stall_end --target /dev/mapper/slow --rw randread --bs 4k --iodepth 4 --duration 2s \
    --interval 500ms
section stall_end_run finish stall_end
t1=$(up)
echo "=== BEGIN stall_end_timing ==="
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "start_to_exit_s=%.2f\n", b - a }'
echo "=== END stall_end_timing rc=0 ==="
# Linear again: dm-delay sends the delayed reads on at suspend, so the device can go.
echo "0 $nvsz linear $nv 0" | table slow
sleep 1
dms remove slow || { sleep 3; dms remove slow; }

# --- partitions: NVMe p1 32M (dm linear), p2 48M (ext4), p3 rest (LVM); SATA 1 8M (swap),
# 2 and 3 12M (md RAID1), 4 rest (ext2)
printf 'o\nn\np\n1\n\n+32M\nn\np\n2\n\n+48M\nn\np\n3\n\n\nw\n' | fdisk $nv >/tmp/fdisk.log 2>&1
printf 'o\nn\np\n1\n\n+8M\nn\np\n2\n\n+12M\nn\np\n3\n\n+12M\nn\np\n\n\nw\n' | fdisk /dev/sda >>/tmp/fdisk.log 2>&1
i=0
while { [ ! -e ${nv}p3 ] || [ ! -e /dev/sda4 ]; } && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done

# sum DISK: sha256sum of the whole disk, remembered in /tmp/DISK.sum for the next refusal.
sum() { sha256sum "$1" | cut -d' ' -f1 | tee "/tmp/$(basename "$1").sum"; }
# refuse NAME TARGET DISK: a write run on TARGET with --destroy-data TARGET (so only the
# guard can stop it), sha256sum of the whole DISK before and after. The sum after one
# refusal is the sum before the next one on the same disk (nothing runs in between).
refuse() {
    f="/tmp/$(basename "$3").sum"
    if [ -s "$f" ]; then b=$(cat "$f"); else b=$(sum "$3"); fi
    drivescope run --target "$2" --rw randwrite --bs 4k --iodepth 4 --duration 2s --json \
        --destroy-data "$2" --session "/tmp/s/$1.yaml" 2>&1
    rc=$?
    sync
    a=$(sum "$3")
    echo "exit=$rc"
    echo "sha256_before=$b"
    echo "sha256_after=$a"
    return $rc
}
t=$(up)
section refuse_ptable refuse ptable /dev/sda /dev/sda
rm -f /tmp/*.sum
echo "guest: one refusal with two checksums of /dev/sda took $(awk -v a="$t" -v b="$(up)" 'BEGIN{print b-a}') s"

# --- d. full filesystems -----------------------------------------------------------------------
if have mkfs.ext4; then mkfs.ext4 -q -F ${nv}p2 >/tmp/mkfs.log 2>&1; else mke2fs -q ${nv}p2; fi
mount -t ext4 ${nv}p2 /mnt/a
section fullfs_df df -k /mnt/a
fullfs_create() {
    drivescope run --target /mnt/a/big.bin --size 96M --rw randread --duration 2s --json 2>&1
    rc=$?
    echo "exit=$rc"
    echo "left: $(ls /mnt/a)"
    return $rc
}
section fullfs_create fullfs_create
# ext2 (busybox mke2fs): no fallocate, so the test file is made sparse and the fill finds
# the filesystem full.
mke2fs -q /dev/sda4
mount -t ext4 /dev/sda4 /mnt/b
fullfs_fill() {
    drivescope run --target /mnt/b/t.bin --size 64M --rw randread --duration 2s --json 2>&1
    rc=$?
    echo "exit=$rc"
    echo "left: $(ls /mnt/b)"
    df -k /mnt/b
    return $rc
}
section fullfs_fill fullfs_fill
rm -f /mnt/b/t.bin
# The filesystem made full (dd stops at ENOSPC), then 2 MiB given back: the sparse file's
# first writes land and the rest meet ENOSPC however slowly this guest writes (6 s of TCG
# on a loaded host wrote 24 of the 32 MiB that were free before).
dd if=/dev/zero of=/mnt/b/filler bs=1M >/dev/null 2>&1
fsz=$(stat -c %s /mnt/b/filler)
truncate -s $((fsz - 2097152)) /mnt/b/filler
truncate -s 64M /mnt/b/sparse.bin
bg fullfs_write --target /mnt/b/sparse.bin --rw write --bs 64k --iodepth 4 --duration 6s \
    --interval 500ms --destroy-data /mnt/b/sparse.bin
section fullfs_write_run finish fullfs_write
section fullfs_write_session session fullfs_write
umount /mnt/b
umount /mnt/a

# --- e. holders ----------------------------------------------------------------------------
echo "0 $(blockdev --getsz ${nv}p1) linear ${nv}p1 0" | dms create dstest
mount -o ro -t ext4 ${nv}p2 /mnt/a
if have lvm; then
    lvmconf='devices { obtain_device_list_from_udev = 0 } activation { udev_sync = 0 udev_rules = 0 }'
    section lvm_setup sh -c "lvm pvcreate -ff -y --config '$lvmconf' ${nv}p3 &&
        lvm vgcreate --config '$lvmconf' vg0 ${nv}p3 &&
        lvm lvcreate --config '$lvmconf' -L 16M -n lv0 vg0 -y &&
        lvm lvs --config '$lvmconf'; ls -l /sys/block/nvme0n1/nvme0n1p3/holders"
fi
mkswap /dev/sda1 >/dev/null && swapon /dev/sda1
if have mdadm; then
    section md_setup sh -c 'mdadm --create /dev/md0 --run --level=1 --raid-devices=2 \
        --metadata=1.2 --assume-clean /dev/sda2 /dev/sda3 2>&1 && cat /proc/mdstat'
fi
sync
rm -f /tmp/*.sum
section holders_blkid sh -c "blkid -p ${nv}p1 ${nv}p2 ${nv}p3 /dev/sda1 /dev/sda2 2>&1; cat /proc/swaps"
section refuse_dm_disk refuse dm_disk $nv $nv
section refuse_dm_part refuse dm_part ${nv}p1 $nv
section refuse_mounted refuse mounted ${nv}p2 $nv
have lvm && section refuse_lvm refuse lvm ${nv}p3 $nv
section refuse_swap refuse swap /dev/sda1 /dev/sda
have mdadm && section refuse_md refuse md /dev/sda2 /dev/sda
section refuse_sata_disk refuse sata_disk /dev/sda /dev/sda
# A write run on the held device's own node is refused too (its members are in use).
have mdadm && mdadm --stop /dev/md0 >/dev/null 2>&1
swapoff /dev/sda1
umount /mnt/a
have lvm && lvm vgchange -an --config "$lvmconf" vg0 >/dev/null 2>&1
dms remove dstest

# --- c. devices that disappear -------------------------------------------------------------
# gone_many: of two drives in one run, the second NVMe controller is removed mid-run: that
# drive fails, the first runs to its end.
if [ -e /dev/nvme1n1 ]; then
    pci1=$(readlink -f /sys/block/nvme1n1/device/device)
    bg gone_many --target /dev/nvme0n1 --target /dev/nvme1n1 --rw randread --bs 4k \
        --iodepth 8 --rate-iops 1000 --duration 6s --interval 500ms
    started gone_many
    sleep 1.5
    echo 1 >"$pci1/remove"
    section gone_many_run finish gone_many
    section gone_many_session session gone_many
fi
bg gone_sata --target /dev/sda --rw randread --bs 4k --iodepth 8 --rate-iops 1000 \
    --duration 120s --interval 500ms
started gone_sata
sleep 1.5
t0=$(up)
echo 1 >/sys/block/sda/device/delete
section gone_sata_run finish gone_sata
t1=$(up)
echo "=== BEGIN gone_sata_timing ==="
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "delete_to_exit_s=%.2f\n", b - a }'
echo "=== END gone_sata_timing rc=0 ==="
section gone_sata_session session gone_sata

pci=$(readlink -f /sys/block/nvme0n1/device/device)
bg gone_nvme --target $nv --rw randread --bs 4k --iodepth 8 --rate-iops 1000 \
    --duration 120s --interval 500ms
started gone_nvme
sleep 1.5
t0=$(up)
echo 1 >"$pci/remove"
section gone_nvme_run finish gone_nvme
t1=$(up)
echo "=== BEGIN gone_nvme_timing ==="
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "remove_to_exit_s=%.2f\n", b - a }'
echo "=== END gone_nvme_timing rc=0 ==="
section gone_nvme_session session gone_nvme

echo "=== ALL DONE ==="
sync
poweroff -f
