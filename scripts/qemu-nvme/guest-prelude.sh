# Sourced by every guest script (installed as /prelude.sh): busybox applets, the pseudo
# filesystems, the modules in /modules.order, the two disks, and section().
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp && mount -t tmpfs tmp /tmp
mkdir -p /run && mount -t tmpfs run /run

# modparams MODULE: its MODULE.PARAM=VALUE words of the kernel command line (as modprobe
# reads them; busybox insmod does not), '-' and '_' alike in the module's name.
modparams() {
    want=$(echo "$1" | tr - _)
    for w in $(cat /proc/cmdline); do
        case "$w" in
            *.*=*) mod=$(echo "${w%%.*}" | tr - _)
                [ "$mod" = "$want" ] && echo "${w#*.}" ;;
        esac
    done
}
for m in $(cat /modules.order); do
    # shellcheck disable=SC2046
    insmod "/modules/$m.ko" $(modparams "$m") || echo "guest: insmod $m failed"
done
i=0
while { [ ! -e /dev/nvme0n1 ] || [ ! -e /dev/sda ]; } && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done

# The console's first line may carry the terminal's reset codes: start on a fresh line.
echo
# section NAME CMD...: runs CMD between "=== BEGIN NAME ===" and "=== END NAME rc=N ===".
section() {
    name=$1
    shift
    echo "=== BEGIN $name ==="
    "$@"
    rc=$?
    echo "=== END $name rc=$rc ==="
}

. /workload.conf
if [ -n "$NVME_SECOND" ]; then
    i=0
    while [ ! -e /dev/nvme1n1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fi
