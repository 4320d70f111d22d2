#!/bin/sh
# /init of the wear guest (GUEST_SCRIPT=scripts/qemu-nvme/guest-wear.sh): what a run did to
# the drive, against the controller's own counters as nvme-cli reads them.
#   wear_before / wear_after  nvme-cli's SMART log just before and just after the run
#   wear_run                  a write run on /dev/nvme0n1 with --json (its drive_wear line)
#   wear_session              the run's session (its drive_wear events)
#   wear_text_run             the same run's text output (its last lines)
# Nothing else touches the namespace between the two logs. tests/qemu/qemu_wear.rs checks
# what each section printed.
. /prelude.sh

export HOME=/tmp/home
mkdir -p "$HOME" /tmp/s
nv=/dev/nvme0n1
section wear_before nvme smart-log /dev/nvme0 -o json
section wear_run drivescope run --target $nv --destroy-data $nv --rw write --bs 128k \
    --size 32M --iodepth 4 --duration 2s --json --session /tmp/s/wear.yaml
section wear_after nvme smart-log /dev/nvme0 -o json
section wear_session cat /tmp/s/wear.yaml
section wear_text_run drivescope run --target $nv --destroy-data $nv --rw write --bs 128k \
    --size 32M --iodepth 4 --duration 1s --session /tmp/s/wear-text.yaml
echo "=== ALL DONE ==="
sync
poweroff -f
