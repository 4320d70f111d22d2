#!/bin/sh
# /init of the power-cut guest (GUEST_SCRIPT=scripts/qemu-nvme/guest-powercut.sh,
# GUEST_MODULES=nbd, GUEST_BINS=target/debug/examples/nbd_cache): `run --verify
# --power-cut` on /dev/nbdN served by examples/nbd_cache, a drive with a volatile cache
# that a cut really drops (unflushed writes gone), honest or lying.
#   pc_honest          20 cuts at random moments on the honest drive (--json)
#   pc_lying           4 cuts on the lying drive (drops and tears flushed blocks)
#   pc_lying_lost_X    the offsets the lying drive had dropped at cut X (a, b, c, d: its
#                      own account)
#   pc_lying_torn_X    the offsets it had torn at cut X
# tests/qemu/qemu_power_cut.rs checks them.
. /prelude.sh

export HOME=/tmp/home
mkdir -p "$HOME"

# serve DEV MODE DIR: the test drive on DEV, once the kernel sees its size.
serve() {
    mkdir -p "$3"
    nbd_cache "$1" 67108864 "$2" "$3" &
    i=0
    while [ "$(cat "/sys/block/$(basename "$1")/size" 2>/dev/null)" = "0" ] && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
}

i=0
while [ ! -e /dev/nbd1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done

H=/tmp/nbd-honest
serve /dev/nbd0 honest $H
section pc_honest drivescope run -t /dev/nbd0 --destroy-data /dev/nbd0 --verify \
    --verify-state /tmp/state-honest --rw randwrite --bs 4k --iodepth 16 --duration 60s \
    --power-cut "echo cut > $H/ctl && read x < $H/ack" \
    --power-restore "echo restore > $H/ctl && read x < $H/ack" \
    --cycles 20 --cut-at "random 0.5s..1.5s" --json

L=/tmp/nbd-lying
serve /dev/nbd1 lying $L
section pc_lying drivescope run -t /dev/nbd1 --destroy-data /dev/nbd1 --verify \
    --verify-state /tmp/state-lying --rw randwrite --bs 4k --iodepth 8 --size 4M \
    --rate-iops 2000 --duration 60s \
    --power-cut "echo cut > $L/ctl && read x < $L/ack" \
    --power-restore "echo restore > $L/ctl && read x < $L/ack" \
    --cycles 4 --cut-at "after 4 epochs" --json
# Section names are letters: cut 1 is a, 2 is b...
for n in 1 2 3 4; do
    c=$(echo "$n" | tr 1234 abcd)
    section "pc_lying_lost_$c" cat "$L/lost.$n"
    section "pc_lying_torn_$c" cat "$L/torn.$n"
done
echo "=== ALL DONE ==="
sync
poweroff -f
