#!/bin/sh
# /init of the drivescope NVMe test guest (busybox). Prints each check between
# "=== BEGIN name ===" and "=== END name rc=N ===" on the serial console, then powers off.
. /prelude.sh

section uname uname -r
section smart_json drivescope smart /dev/nvme0 --json
section nvme_smart_log nvme smart-log /dev/nvme0 -o json
section nvme_id_ctrl nvme id-ctrl /dev/nvme0 -o json
section nvme_power_state nvme get-feature /dev/nvme0 -f 2
# Thermal management: Host Controlled Thermal Management (10h, TMT1/TMT2), the composite
# temperature's thresholds (04h; CDW11 THSEL bits 21:20 = 01b selects the under threshold,
# TMPSEL bits 19:16 = 0 the composite) and the OCP SMART extended log (C0h). nvme-cli 2.3
# prints get-feature in plain text only.
section nvme_hctm nvme get-feature /dev/nvme0 -f 0x10
section nvme_temp_over nvme get-feature /dev/nvme0 -f 4 -c 0
section nvme_temp_under nvme get-feature /dev/nvme0 -f 4 -c 0x100000
section nvme_ocp_log nvme get-log /dev/nvme0 -i 0xc0 -l 512
# Thresholds the host set (over 348 K = 75 °C, under 283 K = 10 °C; both away from QEMU's
# 323 K, so no warning bit): drivescope must read the feature, not Identify's WCTEMP. Then
# QEMU's defaults again (over 343 K, under 0 K) for the sections below.
nvme set-feature /dev/nvme0 -f 4 -v 0x15c </dev/null >/dev/null
nvme set-feature /dev/nvme0 -f 4 -v 0x10011b </dev/null >/dev/null
section thresholds_set_json drivescope smart /dev/nvme0 --json
section nvme_temp_over_set nvme get-feature /dev/nvme0 -f 4 -c 0
section nvme_temp_under_set nvme get-feature /dev/nvme0 -f 4 -c 0x100000
nvme set-feature /dev/nvme0 -f 4 -v 0x157 </dev/null >/dev/null
nvme set-feature /dev/nvme0 -f 4 -v 0x100000 </dev/null >/dev/null
# The poller asks for an unsupported log once: QEMU traces every Get Log Page and Get
# Features (run.sh: nvme-trace.log); the threshold of sensor 8 (TMPSEL 8, which drivescope
# never asks QEMU for: it reports no sensor 8) over and under mark where the watch begins
# and ends in that trace.
nvme get-feature /dev/nvme0 -f 4 -c 0x80000 >/dev/null
section thermal_watch_json drivescope smart /dev/nvme0 --watch 4 --period 1s --json
nvme get-feature /dev/nvme0 -f 4 -c 0x180000 >/dev/null
section smart_ns_json drivescope smart /dev/nvme0n1 --json
section devices_json drivescope devices --json
section hwmon sh -c 'for h in /sys/class/hwmon/hwmon*; do echo "$h $(cat $h/name) $(cat $h/temp1_input)"; done'
# Without privilege: the admin commands are refused and hwmon answers.
chmod 0666 /dev/nvme0
section smart_unprivileged su -s /bin/sh nobody -c 'drivescope smart /dev/nvme0 --json'
# A short workload on the namespace with the telemetry poller watching it.
# States, not times (a TCG guest on a loaded host runs at any pace): the poller's first
# sample, then the workload, then one sample taken after the workload ended; then it stops.
drivescope smart /dev/nvme0n1 --watch 600 --period 1s --json > /tmp/watch.jsonl 2>&1 &
watch_pid=$!
samples() { cat /tmp/watch.jsonl 2>/dev/null | grep -c '^{'; }
wait_samples() {
    i=0
    while [ "$(samples)" -lt "$1" ] && [ $i -lt 6000 ] && kill -0 $watch_pid 2>/dev/null; do
        sleep 0.1; i=$((i + 1))
    done
}
wait_samples 1
section workload sh -c "$WORKLOAD_CMD"
wait_samples $(($(samples) + 1))
kill $watch_pid 2>/dev/null
wait $watch_pid
echo "=== BEGIN watch_json ==="
cat /tmp/watch.jsonl
echo "=== END watch_json rc=$? ==="

# Layers: a partition table, ext4 on partition 2 with a file on it, device-mapper over
# partition 1; drivescope must resolve each down to the NVMe disk.
printf 'o\nn\np\n1\n\n+64M\nn\np\n2\n\n\nw\n' | fdisk /dev/nvme0n1 >/tmp/fdisk.log 2>&1
i=0
while [ ! -e /dev/nvme0n1p2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
mkdir -p /mnt
mke2fs -q /dev/nvme0n1p2 && mount -t ext4 /dev/nvme0n1p2 /mnt && mkdir -p /mnt/data &&
    echo hello >/mnt/data/file.txt
echo "0 $(blockdev --getsz /dev/nvme0n1p1) linear /dev/nvme0n1p1 0" |
    DM_DISABLE_UDEV=1 dmsetup create --noudevsync dstest
section layers_file_json drivescope smart /mnt/data/file.txt --json
# smart on a path that does not exist says so (it does not read the drive of the nearest
# folder that exists); a folder made just now resolves to the drive under it.
section layers_missing_path sh -c 'drivescope smart /mnt/data/not/yet/created.bin --json 2>&1'
mkdir -p /mnt/data/not/yet
section layers_new_file_json drivescope smart /mnt/data/not/yet --json
section layers_dm_json drivescope smart /dev/mapper/dstest --json
section layers_file_watch drivescope smart /mnt/data/file.txt --watch 2 --period 1s --json
section layers_devices_json drivescope devices --json

# A SATA disk on AHCI: smartctl is the reference, drivescope reads it through smartctl.
section sata_smartctl smartctl -j -i -H -A -l scttempsts /dev/sda
section sata_json drivescope smart /dev/sda --json
section sata_hwmon sh -c 'for h in /sys/class/hwmon/hwmon*; do echo "$h $(cat $h/name) $(cat $h/temp1_input 2>&1)"; done'
echo "=== ALL DONE ==="
sync
poweroff -f
