#!/bin/sh
# /init of the drivescope NVMe test guest (busybox). Prints each check between
# "=== BEGIN name ===" and "=== END name rc=N ===" on the serial console, then powers off.
. /prelude.sh

section uname uname -r
section smart_json drivescope smart /dev/nvme0 --json
section nvme_smart_log nvme smart-log /dev/nvme0 -o json
section nvme_id_ctrl nvme id-ctrl /dev/nvme0 -o json
section nvme_power_state nvme get-feature /dev/nvme0 -f 2
section smart_ns_json drivescope smart /dev/nvme0n1 --json
section devices_json drivescope devices --json
section hwmon sh -c 'for h in /sys/class/hwmon/hwmon*; do echo "$h $(cat $h/name) $(cat $h/temp1_input)"; done'
# Without privilege: the admin commands are refused and hwmon answers.
chmod 0666 /dev/nvme0
section smart_unprivileged su -s /bin/sh nobody -c 'drivescope smart /dev/nvme0 --json'
# A short workload on the namespace with the telemetry poller watching it.
drivescope smart /dev/nvme0n1 --watch 4 --period 1s --json > /tmp/watch.jsonl 2>&1 &
watch_pid=$!
sleep 1
section workload sh -c "$WORKLOAD_CMD"
wait $watch_pid
echo "=== BEGIN watch_json ==="
cat /tmp/watch.jsonl
echo "=== END watch_json rc=$? ==="

# Layers: a partition table, ext4 on partition 2 with a file on it, device-mapper over
# partition 1; drivescope must resolve each down to the NVMe disk.
printf 'o\nn\np\n1\n\n+64M\nn\np\n2\n\n\nw\n' | fdisk /dev/nvme0n1 >/tmp/fdisk.log 2>&1
i=0
while [ ! -e /dev/nvme0n1p2 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
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
section sata_smartctl smartctl -j -i -A -l scttempsts /dev/sda
section sata_json drivescope smart /dev/sda --json
section sata_hwmon sh -c 'for h in /sys/class/hwmon/hwmon*; do echo "$h $(cat $h/name) $(cat $h/temp1_input 2>&1)"; done'
echo "=== ALL DONE ==="
sync
poweroff -f
