#!/usr/bin/env bash
# Makes a class-data sharing (AppCDS) archive for each Java driver in
# redlock-drivers.jar, in drivers/java/target/cds/<Driver>.jsa: a JVM
# started with -XX:SharedArchiveFile=<it> maps the classes the driver
# loads instead of parsing them from the jar. Measured on 2 cores (a lab
# run of the library matrix's immediate restart, Spring Integration): the
# clients' launch to READY took 2.2-2.5 s without, 1.5-1.6 s with.
#
# An archive is made by running the driver once under `redlock-sim lab`
# (drivers/java/cds-training.toml: one client locking for 2 s; three
# masters for the Redlock driver) with -XX:ArchiveClassesAtExit, then
# checked with -Xshare:on (which refuses an archive it cannot use). It
# belongs to the jar it was made from, named as the library matrix names
# it (drivers/java/target/redlock-drivers.jar, from the repository's root,
# where the lab runs): run this again after build.sh. A JVM given an
# archive it cannot use (another jar, another path to it, none) starts
# without it, as slowly as before.
#
# Usage: bash drivers/java/cds.sh   (REDLOCK_SIM: the binary; default
# target/release/redlock-sim, built with `cargo build --release`)
set -euo pipefail
cd "$(dirname "$0")/../.."
sim="${REDLOCK_SIM:-target/release/redlock-sim}"
if [ ! -x "$sim" ]; then
    echo "drivers/java/cds.sh: $sim not found: build it with \`cargo build --release\` (or set REDLOCK_SIM)" >&2
    exit 2
fi
jar=drivers/java/target/redlock-drivers.jar
if [ ! -f "$jar" ]; then
    echo "drivers/java/cds.sh: $jar not found: build it with \`bash drivers/java/build.sh\`" >&2
    exit 2
fi
mkdir -p drivers/java/target/cds
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
jvm=(java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
# train <class> <masters> [args...]
train() {
    local class=$1 nodes=$2
    shift 2
    local archive="drivers/java/target/cds/$class.jsa"
    rm -f "$archive"
    "$sim" lab drivers/java/cds-training.toml --set "cluster.nodes=$nodes" --out "$work/$class" -- \
        "${jvm[@]}" "-XX:ArchiveClassesAtExit=$archive" -cp "$jar" "redlocksim.$class" "$@" \
        >"$work/$class.out" 2>&1 || {
        cat "$work/$class.out" "$work/$class"/clients/*.log >&2 || true
        echo "drivers/java/cds.sh: the training run of $class failed" >&2
        exit 1
    }
    if ! "${jvm[@]}" -Xshare:on "-XX:SharedArchiveFile=$archive" -cp "$jar" -version >/dev/null 2>"$work/$class.check"; then
        cat "$work/$class.check" >&2
        echo "drivers/java/cds.sh: the JVM cannot use $archive" >&2
        exit 1
    fi
    echo "made $archive ($(du -h "$archive" | cut -f1))"
}
train RedissonLockDriver 1 watchdog
train RedissonFencedLockDriver 1
train RedissonRedLockDriver 3
train SpringRedisLockRegistryDriver 1
train ShedLockDriver 1 default
