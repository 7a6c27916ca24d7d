#!/usr/bin/env bash
# The README's test command. On a fresh machine it installs what the tests
# need, then checks formatting and lints and runs the whole suite:
#   - redis-server and redis-cli (Debian's redis-server package): the judge
#     of the node's answers, and the real servers of tests/redis/;
#   - redis-sentinel (Debian's package): the judge of the sentinel's answers
#     (tests/redis/sentinel.rs);
#   - faketime (Debian's package): libfaketime, which sets a lab client's
#     clock (tests/lab/runs.rs);
#   - python3 with a venv of the Python lock libraries (PyPI, pinned in
#     tests/libs/python/requirements.txt and drivers/python/requirements.txt)
#     and Node's (npm, pinned by tests/libs/node/package-lock.json), run by
#     tests/redis/lock_libraries.rs and, as lab clients, by tests/lab/runs.rs;
#     the documented bugs' affected and fixed versions (redis-py 2.9.1 and
#     2.10.0 in venvs of their own, redis-semaphore 5.3.0 and 5.3.1 in
#     tests/libs/node-redis-semaphore-<v>/), replayed by tests/lab/bugs.rs
#     (tests/lab/ is the lab's test crate: real client processes);
#   - Go and a JDK with Maven, which build the Go drivers (drivers/go/,
#     go.mod) and the Java drivers (drivers/java/, pom.xml), their bugs'
#     affected and fixed versions included;
#   - PHP with phpredis, Symfony Lock and Laravel's cache and redis
#     (Debian's packages), for the PHP drivers and the PHP template
#     (drivers/php/);
#   - GNU parallel (Debian's package) and actionlint (tools/go.mod), which
#     run and check the recipes that spread a matrix over machines
#     (scripts/matrix-shards.sh, .github/workflows/matrix-shards.yml);
#     DEPS_ONLY=1 stops here, everything installed (the workflow's shard
#     jobs and deploy/k8s/Dockerfile use it);
#   - then `cargo fmt --all --check`, the layering inside each crate
#     (scripts/layers.py: no import cycle but Lua's; the crates' own
#     dependencies keep the layers apart), `cargo test --release` on the
#     workspace (turmoil's own tests run when it changes:
#     scripts/turmoil-tests.sh, vendor/turmoil/PATCH.md), and clippy on
#     every crate but the vendored turmoil, last.
# Without these installs the tests that need them fail, naming this script;
# none is skipped. `cargo test --release --test sim` needs none of them.
# .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's packages, for what the machine lacks.
apt_install() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    if [ -z "${APT_UPDATED:-}" ]; then
        $sudo apt-get update -qq
        APT_UPDATED=1
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    echo "scripts/test.sh: installing redis-server from Debian's packages"
    apt_install redis-server
fi
redis-server --version
if ! command -v redis-sentinel >/dev/null 2>&1; then
    echo "scripts/test.sh: installing redis-sentinel from Debian's packages"
    apt_install redis-sentinel
fi

if ! command -v faketime >/dev/null 2>&1; then
    echo "scripts/test.sh: installing faketime (libfaketime) from Debian's packages"
    apt_install faketime
fi

if ! command -v python3 >/dev/null 2>&1; then
    echo "scripts/test.sh: installing python3 from Debian's packages"
    apt_install python3 python3-venv
fi
VENV=tests/libs/python/.venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" 2>/dev/null; then
        echo "scripts/test.sh: installing python3-venv from Debian's packages"
        rm -rf "$VENV"
        apt_install python3-venv
        python3 -m venv "$VENV"
    fi
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/libs/python/requirements.txt -r drivers/python/requirements.txt
# The versions of the documented bugs (scenarios/libraries/bugs.toml), each
# in a venv of its own: the affected redis-py and the fixed one.
for v in 2.9.1 2.10.0; do
    OLD=tests/libs/python/.venv-redis-$v
    if [ ! -x "$OLD/bin/python" ] || ! "$OLD/bin/python" -c "import redis" 2>/dev/null; then
        rm -rf "$OLD"
        python3 -m venv "$OLD"
    fi
    "$OLD/bin/python" -m pip install -q --disable-pip-version-check -r drivers/python/requirements-redis-$v.txt
done
if ! command -v npm >/dev/null 2>&1; then
    echo "scripts/test.sh: installing nodejs and npm from Debian's packages"
    apt_install nodejs npm
fi
# npm ci wipes node_modules and reinstalls: only when what was installed
# last (a copy of the lock file it installed from) is not package-lock.json.
for NODE_LIBS in tests/libs/node tests/libs/node-redis-semaphore-5.3.0 tests/libs/node-redis-semaphore-5.3.1; do
    if ! cmp -s "$NODE_LIBS/package-lock.json" "$NODE_LIBS/node_modules/.installed-lock.json"; then
        npm ci --prefix "$NODE_LIBS" --no-audit --no-fund --loglevel=error
        cp "$NODE_LIBS/package-lock.json" "$NODE_LIBS/node_modules/.installed-lock.json"
    fi
done
python3 --version
node --version
# PHP's drivers (drivers/php/): the lock libraries of Debian's packages
# (Symfony Lock 5.4, Laravel's cache and redis 8.83, phpredis).
if ! command -v php >/dev/null 2>&1 || ! php -r 'exit(class_exists("Redis") && is_file("/usr/share/php/Symfony/Component/Lock/autoload.php") && is_file("/usr/share/php/Illuminate/Cache/RedisLock.php") ? 0 : 1);'; then
    echo "scripts/test.sh: installing PHP and its lock libraries from Debian's packages"
    apt_install php-cli php-redis php-symfony-lock php-illuminate-cache php-illuminate-redis
fi
php --version | head -1

# Go's and Java's drivers (drivers/go/, drivers/java/): every version pinned
# (go.mod and go.sum, pom.xml), fetched by each ecosystem's own tool from the
# Go module proxy and Maven Central the first time, offline after.
if ! command -v go >/dev/null 2>&1; then
    echo "scripts/test.sh: Go 1.21 or later is missing (drivers/go/): install it from https://go.dev/doc/install (go.mod asks for 1.26, which Go downloads itself)" >&2
    exit 1
fi
go version
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
    echo "scripts/test.sh: installing Maven and a JDK (17) from Debian's packages"
    apt_install maven openjdk-17-jdk-headless
fi
java -version 2>&1 | head -1
# They build in the background, beside the build of tests/lab below; the
# tests wait for them (drivers_built). DEPS_ONLY=1 builds them at once.
# (Measured on 2 cores: the 2 minutes they take move the build by as much.)
drivers_log="$(mktemp)"
build_drivers() {
    (bash drivers/go/build.sh && bash drivers/java/build.sh) >"$drivers_log" 2>&1 &
    drivers_pid=$!
}
drivers_built() {
    local status=0
    wait "$drivers_pid" || status=$?
    cat "$drivers_log"
    rm -f "$drivers_log"
    if [ "$status" != 0 ]; then
        echo "scripts/test.sh: building the drivers failed (bash drivers/go/build.sh, bash drivers/java/build.sh): exit $status" >&2
        exit 1
    fi
}

# The recipes that spread a matrix over machines (tests/lab/recipes.rs,
# tests/lab/matrix.rs): GNU parallel, and actionlint for the GitHub
# Actions workflow, pinned by tools/go.mod's tool directive and go.sum
# (built once here, offline after).
if ! command -v parallel >/dev/null 2>&1; then
    echo "scripts/test.sh: installing GNU parallel from Debian's packages"
    apt_install parallel
fi
(cd tools && go tool actionlint -version | head -1)

if [ "${DEPS_ONLY:-}" = 1 ]; then
    build_drivers
    drivers_built
    echo "scripts/test.sh: DEPS_ONLY=1: what the drivers and tests need is installed; no test run"
    exit 0
fi

# The toolchain's own checkers (rustup's components where rustup is used).
for tool in rustfmt clippy; do
    if ! cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1; then
        echo "scripts/test.sh: adding the $tool component"
        rustup component add "$tool"
    fi
done

# Cargo.toml builds no unit-test binary for the command line (src/) nor
# for a crate without unit tests (its [lib] test = false): a unit test
# there would never run.
for dir in src crates/simulation/src; do
    if grep -rqE '#\[(cfg\()?test\)?\]' "$dir"; then
        echo "scripts/test.sh: $dir has a unit test, which its Cargo.toml's test = false would never run: remove test = false, or move it to tests/" >&2
        exit 1
    fi
done
echo "scripts/test.sh: [${SECONDS} s] cargo fmt --all --check"
cargo fmt --all --check
# One direction of data inside each crate: no import cycle between its
# files (a file's tests aside). Between crates the compiler enforces it.
# The one cycle allowed is Lua's: the keyspace holds the script cache and
# its interpreter, whose redis.call dispatches commands on the keyspace.
for crate in crates/*/ .; do
    crate=${crate%/}
    allow=""
    [ "$crate" = crates/node ] && allow="--allow-cycle keyspace.rs,scripting/mod.rs"
    echo "scripts/test.sh: python3 scripts/layers.py $crate/src $allow"
    python3 scripts/layers.py "$crate/src" $allow
done
build_drivers
# turmoil's own tests run when turmoil changes (scripts/turmoil-tests.sh,
# minutes of build): the suite checks that vendor/turmoil is the tree
# they last passed on (vendor/turmoil/TESTED, tests/sim/vendored.rs).
#
# The tests: every test binary of `cargo test --release --workspace
# --exclude turmoil` (each crate's unit tests, tests/sim, tests/redis,
# tests/lab), run here one by one from its package's directory as cargo
# runs them, then the doc tests. tests/lab (real processes in real time,
# mostly waiting) is built first and runs in the background beside the
# build of the others and the simulation's tests: the load a CI runner
# puts beside a user's lab too (two cores busy), which its tests hold
# (docs/testing.md). tests/sim is built next and runs in the background
# beside the build of the crates' unit tests, whose chain of crates
# leaves a core idle at times (measured: the suite 966 s with it after
# the build, over the 15 minutes). Every binary runs even when one fails;
# the last line adds up their results; the script exits 1 if any failed.
log="$(mktemp)"
lab_log="$(mktemp)"
sim_log="$(mktemp)"
redis_log="$(mktemp)"
json="$(mktemp)"
trap 'rm -f "$log" "$lab_log" "$sim_log" "$redis_log" "$json"' EXIT
# The test executables cargo built, as "package directory<TAB>path<TAB>target".
test_binaries() {
    python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["profile"]["test"] and m.get("executable"):
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"] + "\t" + m["target"]["name"])
' <"$json"
}
# A build that fails ends the suite once what runs in the background has
# ended (the drivers' build, tests already started): nothing is left
# running.
build_tests() {
    cargo test --release --workspace --exclude turmoil --no-run --message-format=json-render-diagnostics "$@" >"$json" || {
        wait || true
        cat "$drivers_log" "$lab_log" "$sim_log" 2>/dev/null || true
        echo "scripts/test.sh: the build failed (above the tests' output)" >&2
        exit 1
    }
}
failed=0
# One test binary, from its package's directory; its output to $2.
run_binary() {
    local dir="$1" exe="$2" out="$3"
    echo "     Running $(basename "$exe") (in ${dir#"$PWD"/})" >>"$out"
    (cd "$dir" && "$exe") >>"$out" 2>&1
}
echo "scripts/test.sh: [${SECONDS} s] cargo test --release --no-run --test lab"
build_tests --test lab
IFS=$'\t' read -r lab_dir lab_exe _ < <(test_binaries)
# The examples (the Rust lab template, the redis crate's lock), which
# tests/lab and tests/sim run: built now and named to them, so that no test
# runs cargo, which would wait for the build directory's lock while the
# builds below hold it.
echo "scripts/test.sh: [${SECONDS} s] cargo build --release --examples"
cargo build --release --examples --quiet || { wait || true; exit 1; }
REDLOCK_SIM_EXAMPLES="$(dirname "$(dirname "$lab_exe")")/examples"
export REDLOCK_SIM_EXAMPLES
drivers_built
echo "scripts/test.sh: [${SECONDS} s] tests/lab in the background"
run_binary "$lab_dir" "$lab_exe" "$lab_log" &
lab_pid=$!
echo "scripts/test.sh: [${SECONDS} s] cargo test --release --no-run --test sim"
build_tests --test sim
IFS=$'\t' read -r sim_dir sim_exe _ < <(test_binaries)
echo "scripts/test.sh: [${SECONDS} s] tests/sim in the background; cargo test --release --workspace --exclude turmoil --no-run"
run_binary "$sim_dir" "$sim_exe" "$sim_log" &
sim_pid=$!
build_tests
# tests/redis (real redis-server and sentinel, mostly waiting) goes in the
# background too, beside the simulation's tests and the unit tests.
redis_pid=""
while IFS=$'\t' read -r dir exe target; do
    [ "$exe" = "$lab_exe" ] || [ "$exe" = "$sim_exe" ] && continue
    if [ "$target" = redis ]; then
        echo "scripts/test.sh: [${SECONDS} s] tests/redis in the background"
        run_binary "$dir" "$exe" "$redis_log" &
        redis_pid=$!
        continue
    fi
    echo "scripts/test.sh: [${SECONDS} s] $(basename "$exe")"
    run_binary "$dir" "$exe" "$log" || failed=1
    tail -n 3 "$log" | grep '^test result' || true
done < <(test_binaries)
echo "scripts/test.sh: [${SECONDS} s] the doc tests"
# cargo's status, not the filter's: `|| true` after the pipeline would
# have made PIPESTATUS its own (a failing doc test passed the suite).
if ! cargo test --release --workspace --exclude turmoil --doc 2>&1 | tee -a "$log" | { grep -E '^(test result|error)' || true; }; then
    echo "scripts/test.sh: the doc tests failed (above)" >&2
    failed=1
fi
# clippy last, beside the background tests' waiting (its check of the
# dependencies shares nothing with the build): before the build it held
# back tests/lab's start by as long (measured on 2 cores: the suite 558 s
# with clippy first). A lint fails the suite at its end. turmoil
# (vendor/turmoil) is upstream's code with our patch: linted by upstream,
# not by our rules.
echo "scripts/test.sh: [${SECONDS} s] cargo clippy --release --workspace --exclude turmoil --all-targets -- -D warnings"
if ! cargo clippy --release --workspace --exclude turmoil --all-targets -- -D warnings; then
    echo "scripts/test.sh: cargo clippy found warnings (above)" >&2
    failed=1
    clippy_failed=1
fi
echo "scripts/test.sh: [${SECONDS} s] waiting for tests/sim, tests/redis and tests/lab"
wait "$sim_pid" || failed=1
echo "scripts/test.sh: [${SECONDS} s] tests/sim done"
if [ -n "$redis_pid" ]; then wait "$redis_pid" || failed=1; fi
wait "$lab_pid" || failed=1
cat "$log" "$sim_log" "$redis_log" "$lab_log" | grep -vE '^test .* \.\.\. ok$' || true
cat "$sim_log" "$redis_log" "$lab_log" >>"$log"
echo "scripts/test.sh: [${SECONDS} s] done"
awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed;?$/) p += $i; if ($(i+1) ~ /^failed;?$/) f += $i; if ($(i+1) ~ /^ignored;?$/) g += $i } }
     END { printf "(%d ignored: our exploring tests, run by hand with --ignored)\nsuite: %d passed, %d failed\n", g, p, f }' "$log"
[ -z "${clippy_failed:-}" ] || echo "suite: clippy failed (its warnings above)"
exit "$failed"
