#!/usr/bin/env bash
# Builds the Java drivers into drivers/java/target/ (run from anywhere):
#   redlock-drivers.jar             every driver, at the versions pom.xml pins
#                                   (Redisson 3.52.0, Spring Integration 6.5.5,
#                                   ShedLock 7.10.1)
#   redisson-3.43.0.jar, -3.44.0    the same sources against Redisson 3.43.0
#                                   and 3.44.0 (the watchdog's renewal, #6303),
#   redisson-3.45.1.jar, -3.46.0    3.45.1 and 3.46.0 (the watchdog after one
#                                   thread re-entered the lock, #6144),
#   redisson-3.23.5.jar, -3.24.1    3.23.5 and 3.24.1 (an unlock resent after
#                                   a response timeout, #4871)
#   spring-integration-5.1.1.jar,   RedisLockRegistry's driver against 5.1.1
#   spring-integration-5.1.2.jar    and 5.1.2 (its unlock, PR #2661)
# Maven fetches what pom.xml pins from Maven Central the first time; after
# that it builds offline (mvn -o).
set -euo pipefail
cd "$(dirname "$0")"
package() { mvn -q -B -f pom.xml package "$@"; }
package
for v in 3.43.0 3.44.0 3.45.1 3.46.0 3.23.5 3.24.1; do package -Dredisson.version="$v" -Dfinal="redisson-$v"; done
for v in 5.1.1 5.1.2; do
    package -P spring-integration-5.1 -Dsi.version="$v.RELEASE" -Dfinal="spring-integration-$v"
done
echo "built: $(cd target && echo *.jar)"
