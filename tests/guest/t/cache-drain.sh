# SPDX-License-Identifier: GPL-2.0
# CPU hotplug drains the cache: after polled IO on CPU1 leaves bios cached
# there, offlining CPU1 empties its lists, and its drain counter grows by
# exactly what it held.
. /tests/lib.sh

cpu=1
[ -f /sys/devices/system/cpu/cpu$cpu/online ] || fail "no cpu$cpu to offline"
nullb_create_polled drain
taskset -c $cpu uring-io -d /dev/drain -o read -p -q 32 -n 4000 > /dev/null || fail "polled reads on cpu$cpu failed"
held=$(($(cache_stat $DIO_BIOSET $cpu nr) + $(cache_stat $DIO_BIOSET $cpu nr_irq)))
d0=$(cache_stat $DIO_BIOSET $cpu drain_hotplug)
[ "$held" -gt 0 ] || fail "no bios cached on cpu$cpu after IO there"
log "cpu$cpu holds $held bios"

cpu_set $cpu 0
expect_eq "cpu$cpu nr after offline" "$(cache_stat $DIO_BIOSET $cpu nr)" 0
expect_eq "cpu$cpu nr_irq after offline" "$(cache_stat $DIO_BIOSET $cpu nr_irq)" 0
expect_eq "cpu$cpu drained" "$(($(cache_stat $DIO_BIOSET $cpu drain_hotplug) - d0))" "$held"
cpu_set $cpu 1
taskset -c $cpu uring-io -d /dev/drain -o read -p -q 8 -n 1000 > /dev/null || fail "polled reads after online failed"
