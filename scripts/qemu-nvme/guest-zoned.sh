#!/bin/sh
# /init of the zoned guest (GUEST_SCRIPT=scripts/qemu-nvme/guest-zoned.sh, booted with
# NVME_ZONED=1 GUEST_BINS="fio blkzone"): a zoned NVMe namespace (ZNS, 16 zones of 4 MiB).
#   zoned_sysfs          the namespace's queue/ attributes, as the kernel shows them
#   zoned_devices(_text) `drivescope devices --json` and its table
#   zoned_random         a random write: refused before any I/O, saying why (exit 2)
#   zoned_offset         a write starting inside a zone: refused
#   zoned_wrap           a write ending by time (it would come round): refused
#   zoned_dirty          fio (zonemode=zbd) writes zones 0-3, so that the zones are not empty
#   zoned_partial        drivescope writes 10 MiB from 0 (2.5 zones): its zones reset first
#   zoned_partial_report `blkzone report` after it (zone 3 stays as fio left it)
#   zoned_states         the telemetry poller's sample (`drivescope smart --watch 1`): its
#                        zones by condition, to count against that report
#   zoned_deep           16 MiB at iodepth 8 (mq-deadline's zone write locking orders it)
#   zoned_preset         the zoned-seq-write preset over the whole namespace, then its report,
#                        and the kernel's block stats around it (zoned_stat_before/after)
#   zoned_fio(_uring)    fio zonemode=zbd rw=write over the whole namespace (psync, then
#                        io_uring, each at iodepth 1 after a reset), then its report
#   cmp_drivescope_X, cmp_fio_X  three alternating rounds of both writing the whole
#                        namespace at iodepth 1 (io_uring), for their throughput side by side
#   append_ng            the namespace's generic device (/dev/ngXnY) and its block device
#   append_refused_*     zone append refused before any I/O, saying why (exit 2): on the
#                        block device (io_uring engine), at random (by the write guard),
#                        reading, with the sync engine, on
#                        the conventional namespace's generic device, and plain passthrough
#                        writes at iodepth 8 (they bypass the kernel's zone write ordering)
#   append_dirty         fio writes zones 0-1, so that the append step must reset them
#   append               drivescope appends 14 MiB (3.5 zones) at iodepth 8 through
#                        /dev/ngXnY (NVMe Zone Append, uring-cmd), the zones reset first;
#                        append_report: `blkzone report` after it
#   (QEMU's trace of its NVMe writes and their completions, nvme-trace.log, names each Zone
#   Append, its zone and when it completed.)
# tests/qemu/qemu_zoned.rs checks what each section printed.
. /prelude.sh

export HOME=/tmp/home
mkdir -p "$HOME"
z=
i=0
while [ -z "$z" ] && [ $i -lt 600 ]; do
    for q in /sys/block/nvme*/queue/zoned; do
        [ -e "$q" ] && [ "$(cat "$q")" != none ] && z=/dev/$(basename "$(dirname "$(dirname "$q")")")
    done
    [ -n "$z" ] || sleep 0.1
    i=$((i + 1))
done
q=/sys/block/$(basename "$z")/queue
sysfs() {
    echo "dev=$z"
    for a in zoned chunk_sectors nr_zones max_open_zones max_active_zones scheduler; do
        echo "$a=$(cat "$q/$a")"
    done
}
section zoned_sysfs sysfs
section zoned_devices drivescope devices --json
section zoned_devices_text drivescope devices
run() { drivescope run --target "$z" --destroy-data "$z" --json "$@"; }
section zoned_random run --rw randwrite --bs 4k --duration 2s
section zoned_offset run --rw write --bs 128k --offset 6M --duration 2s
section zoned_wrap run --rw write --bs 128k --duration 2s
blkzone reset "$z"
section zoned_dirty fio --name=dirty --filename="$z" --zonemode=zbd --rw=write --bs=128k \
    --direct=1 --ioengine=psync --size=16M --thread --output-format=json
section zoned_before blkzone report "$z"
preset() { # preset NAME IODEPTH REGION: a one-step sequential write preset
    cat >"/tmp/$1.yaml" <<YAML
id: $1
name: $1
description: a sequential write of $3 from the start at iodepth $2
phases:
  - name: write
    workload: {rw: write, bs: 128k, iodepth: $2, jobs: 1, region: $3}
    end: {data: 1x}
YAML
}
preset partial 1 10MiB
section zoned_partial run --preset-file /tmp/partial.yaml
section zoned_partial_report blkzone report "$z"
section zoned_states drivescope smart "$z" --watch 1 --period 1s --json
preset deep 8 16MiB
section zoned_deep run --preset-file /tmp/deep.yaml
section zoned_deep_report blkzone report "$z"
stat() { echo "stat=$(cat /sys/block/$(basename "$z")/stat)"; }
section zoned_stat_before stat
section zoned_preset run --preset zoned-seq-write
section zoned_stat_after stat
section zoned_preset_report blkzone report "$z"
blkzone reset "$z"
section zoned_fio fio --name=zbd --filename="$z" --zonemode=zbd --rw=write --bs=128k \
    --iodepth=1 --direct=1 --ioengine=psync --size=64M --thread --output-format=json
section zoned_fio_report blkzone report "$z"
blkzone reset "$z"
section zoned_fio_uring fio --name=zbd --filename="$z" --zonemode=zbd --rw=write --bs=128k \
    --iodepth=1 --direct=1 --ioengine=io_uring --size=64M --thread --output-format=json
section zoned_fio_uring_report blkzone report "$z"
# Alternating rounds over the whole namespace at iodepth 1 (zones reset before each):
# drivescope's io_uring write, then fio's (zonemode=zbd, io_uring), three times.
preset whole 1 64MiB
for r in a b c; do
    section "cmp_drivescope_$r" run --preset-file /tmp/whole.yaml
    blkzone reset "$z"
    section "cmp_fio_$r" fio --name=zbd --filename="$z" --zonemode=zbd --rw=write --bs=128k \
        --iodepth=1 --direct=1 --ioengine=io_uring --size=64M --thread --output-format=json
done
# Zone append through the namespace's generic device: the block device nvmeXnY is ngXnY.
ng=/dev/ng${z#/dev/nvme}
c=
for cz in /sys/block/nvme*n1/queue/zoned; do
    [ "$(cat "$cz")" = none ] && [ -z "$c" ] && c=/dev/ng$(basename "$(dirname "$(dirname "$cz")")" | sed 's/^nvme//')
done
ngsysfs() {
    echo "ng=$ng"
    echo "conventional=$c"
    ls -l "$ng" "$c"
    echo "zone_append_max_bytes=$(cat "$q/zone_append_max_bytes")"
}
section append_ng ngsysfs
append() { drivescope run --destroy-data "$1" --json --target "$@"; }
section append_refused_block append "$z" --rw write --bs 128k --zone-append --duration 2s
section append_refused_random append "$ng" --rw randwrite --bs 128k --zone-append --duration 2s
section append_refused_read append "$ng" --rw read --bs 128k --zone-append --duration 2s
section append_refused_sync append "$ng" --engine sync --rw write --bs 128k --zone-append \
    --duration 2s
section append_refused_conventional append "$c" --rw write --bs 128k --iodepth 8 \
    --zone-append --duration 2s
cat >/tmp/queued.yaml <<YAML
id: queued
name: queued
description: plain passthrough writes of 16 MiB at iodepth 8
phases:
  - name: write
    workload: {rw: write, bs: 128k, iodepth: 8, jobs: 1, region: 16MiB}
    end: {data: 1x}
YAML
section append_refused_queued append "$ng" --preset-file /tmp/queued.yaml
blkzone reset "$z"
section append_dirty fio --name=dirty --filename="$z" --zonemode=zbd --rw=write --bs=128k \
    --direct=1 --ioengine=psync --size=8M --thread --output-format=json
cat >/tmp/append.yaml <<YAML
id: append
name: append
description: 14 MiB of zone appends from the start at iodepth 8
phases:
  - name: append
    workload: {rw: write, bs: 128k, iodepth: 8, jobs: 1, region: 16MiB, zone_append: true}
    end: {data: 14MiB}
YAML
section append append "$ng" --preset-file /tmp/append.yaml
section append_report blkzone report "$z"
echo "=== ALL DONE ==="
poweroff -f
