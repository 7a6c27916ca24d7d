#!/usr/bin/env bash
# Builds the Go drivers into drivers/go/bin/ (run from anywhere):
#   bin/redsync              redsync v4.18.1 (go.mod)
#   bin/redislock            bsm/redislock v0.9.4 (go.mod)
#   bin/rueidislock          rueidis v1.0.79's rueidislock (go.mod)
#   bin/redsync-4.12.0/.1    redsync/main.go against redsync 4.12.0 / 4.12.1
#                            (go.redsync-4.12.*.mod: redsync PR #151)
#   bin/redsync-4.0.3/.4     redsync-goredis8/main.go against redsync 4.0.3 /
#                            4.0.4 on go-redis v8 (go.redsync-4.0.*.mod: PR #61)
# Every version is pinned, with its go.sum beside its go.mod: once the modules
# are in the module cache (the first build downloads them through the Go
# module proxy) it builds offline (GOPROXY=off).
set -euo pipefail
cd "$(dirname "$0")"
build() { # build OUT PKG [MODFILE]
  go build -buildvcs=false ${3:+-modfile="$3"} -o "bin/$1" "./$2"
}
build redsync redsync
build redislock redislock
build rueidislock rueidislock
build template template
for v in 4.12.0 4.12.1; do build "redsync-$v" redsync "go.redsync-$v.mod"; done
for v in 4.0.3 4.0.4; do build "redsync-$v" redsync-goredis8 "go.redsync-$v.mod"; done
echo "built: $(cd bin && echo *)"
