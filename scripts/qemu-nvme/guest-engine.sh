#!/bin/sh
# /init of the engine guest (GUEST_SCRIPT=scripts/qemu-nvme/guest-engine.sh, booted with
# KERNEL_APPEND=nvme.poll_queues=1 QEMU_TRACE="pci_nvme_read pci_nvme_write"):
# Booted with QEMU_SMP=2: with one vCPU under TCG, QEMU 7.2's controller and Linux 6.1 often
# stop completing a poll queue's commands (after none to some fifty thousand; every later
# polled run gets none, even after a controller reset; a plain liburing loop with
# IORING_SETUP_IOPOLL, scripts/minloop.c with FLAGS 4, hangs the same way). The polled runs
# are kept to 1 s and get up to three tries, the controller reset before each retry.
#   poll_*      the poll queue the driver made (blk-mq's hctx types), the NVMe queues'
#               interrupt counts before and after a `--hipri` run on /dev/nvme0n1 (and
#               plain_*: the same without --hipri), its session
#   cmd_hipri_* polled passthrough reads on /dev/ng0n1, the interrupt counts around them
#   cmd_write_* a passthrough write (`--target /dev/ng0n1`, chosen as uring-cmd) over 16 MiB,
#               then block reads of sample sectors of /dev/nvme0n1 (each 512-byte sector
#               starts with drivescope's stamp and its own byte offset) and sha256 of the
#               region before and after
#   cmd_read_*  random data written through the block device at 32 MiB, sha256 of it by
#               block reads before and after a passthrough read of it, with markers in
#               QEMU's trace around the run (the LBAs it read)
#   *_readback  with GUEST_BINS=.../examples/nvme_readback: a region read through
#               passthrough (the engine's command builder) and through the block device,
#               a hash of each
#   nopoll_*    the nvme driver reloaded without poll queues: `--hipri` says why, exit 2
# tests/qemu/qemu_engine.rs checks what each section printed.
. /prelude.sh

export HOME=/tmp/home
mkdir -p "$HOME" /tmp/s
nv=/dev/nvme0n1
ng=/dev/ng0n1
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# irqs: the interrupts each NVMe queue raised, "nvme0qN=COUNT" (all CPUs' columns). A poll
# queue has no interrupt: what it completes, the kernel polled for.
irqs() {
    grep nvme0q /proc/interrupts |
        awk '{ n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print $NF "=" n }'
}
# sectors LIST: for each sector number, "sector=N stamp=S offset=O" from a block read.
sectors() {
    for s in "$@"; do
        set -- $(dd if=$nv bs=512 skip="$s" count=1 iflag=direct 2>/dev/null | od -A n -t u8 -N 16)
        echo "sector=$s stamp=$1 offset=$2"
    done
}
sum() { # sum OFFSET_MIB SIZE_MIB: "sum=SHA256" of the region, by block reads
    echo "sum=$(dd if=$nv bs=1M skip="$1" count="$2" iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
}
# reset_ctrl: resets the controller (its queues are made again) and waits until it is live.
reset_ctrl() {
    echo 1 >/sys/class/nvme/nvme0/reset_controller
    i=0
    while [ "$(cat /sys/class/nvme/nvme0/state)" != live ] && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    sleep 0.5
}
# A command QEMU traces as a marker: a one-sector read at LBA N (N far from the regions).
marker() { dd if=$nv of=/dev/null bs=512 skip="$1" count=1 iflag=direct 2>/dev/null; }

section poll_setup sh -c "cat /proc/cmdline; echo poll_queues=\$(cat /sys/module/nvme/parameters/poll_queues); echo io_poll=\$(cat /sys/block/nvme0n1/queue/io_poll); ls -l $ng"
section poll_queues sh -c 'for d in /sys/kernel/debug/block/nvme0n1/hctx*; do echo "$(basename $d)=$(cat $d/type)"; done'
# The same reads without --hipri: the interrupts they raise.
section plain_before irqs
section plain_run drivescope run --target $nv --rw randread --bs 4k --iodepth 8 \
    --duration 2s --interval 500ms --json --session /tmp/s/plain.yaml
section plain_after irqs
# Up to three tries (a, b, c), the controller reset before each retry: see above.
for t in a b c; do
    [ $t = a ] || reset_ctrl
    section poll_before_$t irqs
    section poll_run_$t drivescope run --target $nv --hipri --rw randread --bs 4k --iodepth 4 \
        --duration 1s --interval 250ms --json --session /tmp/s/hipri_$t.yaml
    section poll_after_$t irqs
    section poll_session_$t cat /tmp/s/hipri_$t.yaml
    grep -q 'ended_by: duration' /tmp/s/hipri_$t.yaml && break
done


# Passthrough writes over the first 16 MiB (sequential, 128 KiB, several passes).
section cmd_write_before sum 0 16
section cmd_write_run drivescope run --target $ng --destroy-data $ng --rw write --bs 128k \
    --size 16M --iodepth 8 --duration 2s --interval 500ms --json --session /tmp/s/cmdw.yaml
section cmd_write_after sum 0 16
section cmd_write_sectors sectors 0 1 7 8 255 256 4095 12345 32766 32767
# The same region read both ways (examples/nvme_readback: the engine's NVMe read commands
# into a registered buffer, and O_DIRECT block reads), when the test put it in the guest.
if command -v nvme_readback >/dev/null; then
    section cmd_write_readback nvme_readback $ng $nv 0 $((16 << 20))
fi
section cmd_write_session cat /tmp/s/cmdw.yaml

# Random data at 32 MiB through the block device; read through passthrough.
dd if=/dev/urandom of=$nv bs=1M seek=32 count=16 oflag=direct 2>/dev/null
sync
section cmd_read_before sum 32 16
marker 200000
section cmd_read_run drivescope run --target $ng --engine uring-cmd --rw randread --bs 4k \
    --offset 32M --size 16M --iodepth 16 --duration 2s --interval 500ms --json \
    --session /tmp/s/cmdr.yaml
marker 200001
section cmd_read_after sum 32 16
if command -v nvme_readback >/dev/null; then
    section cmd_read_readback nvme_readback $ng $nv $((32 << 20)) $((16 << 20))
fi

# Polled passthrough: NVMe reads through the poll queue, made afresh by a controller reset.
for t in a b c; do
    reset_ctrl
    section cmd_hipri_before_$t irqs
    section cmd_hipri_run_$t drivescope run --target $ng --hipri --rw randread --bs 4k \
        --offset 32M --size 16M --iodepth 4 --duration 1s --interval 250ms --json \
        --session /tmp/s/cmdh_$t.yaml
    section cmd_hipri_after_$t irqs
    grep -q 'ended_by: duration' /tmp/s/cmdh_$t.yaml && break
done

# Without poll queues: the driver's poll_queues set to 0, taking effect at a controller
# reset (the namespace's queues are made again).
echo 0 >/sys/module/nvme/parameters/poll_queues
reset_ctrl
section nopoll_setup sh -c "echo poll_queues=\$(cat /sys/module/nvme/parameters/poll_queues); echo io_poll=\$(cat /sys/block/nvme0n1/queue/io_poll)"
section nopoll_run sh -c "drivescope run --target $nv --hipri --duration 1s --session /tmp/s/nopoll.yaml 2>&1"
section nopoll_session sh -c "ls /tmp/s/nopoll.yaml 2>&1"

echo "=== ALL DONE ==="
sync
poweroff -f
