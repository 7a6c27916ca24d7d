// A template driver for `redlock-sim lab`: copy it to judge YOUR lock library.
//
//	bash drivers/go/build.sh   # or: cd drivers/go && go build -o bin/template ./template
//	redlock-sim lab scenarios/gc_pause.toml -- drivers/go/bin/template
//
// It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY,
// READY, the loop, FENCE, HELD (after the lock and after every renewal),
// WRITE with a check before each write after the first, RELEASED the moment
// the lock is lost. Its lock is a placeholder: the simplest correct lock on
// one Redis, with go-redis v9 (`SET key token NX PX ttl`, a
// compare-and-delete script), on the first node of REDLOCK_NODES, or in
// `single` on the master the sentinel names. Replace the five functions
// marked `YOUR LIBRARY` (and key); the rest needs no change.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	env      = os.Getenv
	ctx      = context.Background()
	me, res  = env("REDLOCK_CLIENT"), env("REDLOCK_RESOURCE")
	ttl      = ms("REDLOCK_TTL_MS")
	timeout  = ms("REDLOCK_REQUEST_TIMEOUT_MS")
	renew    = env("REDLOCK_RENEW") == "1"
	store    = redis.NewClient(&redis.Options{Addr: env("REDLOCK_STORE"), ReadTimeout: -1}) // READY waits
	sentinel *redis.SentinelClient
)

func ms(name string) time.Duration {
	v, _ := strconv.Atoi(env(name))
	return time.Duration(v) * time.Millisecond
}

// draw draws a duration from REDLOCK_X_MS = "A..B" (or "A").
func draw(name string) time.Duration {
	lo, hi, found := strings.Cut(env(name), "..")
	a, _ := strconv.Atoi(lo)
	b := a
	if found {
		b, _ = strconv.Atoi(hi)
	}
	return time.Duration((float64(a) + mrand.Float64()*float64(b-a)) * float64(time.Millisecond))
}

// ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: return them) ----
var key = res // the key your library keeps the lock under (LOCKKEY below)
var extendScript = redis.NewScript("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0")
var unlockScript = redis.NewScript("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0")
var nodes = map[string]*redis.Client{}

type handle struct {
	node  *redis.Client
	token string
}

func connect() (*redis.Client, error) { // YOUR LIBRARY: connect (the master, asked of the sentinel in `single`)
	addr := strings.Split(env("REDLOCK_NODES"), ",")[0]
	if sentinel != nil {
		hp, err := sentinel.GetMasterAddrByName(ctx, env("REDLOCK_MASTER_NAME")).Result()
		if err != nil {
			return nil, err
		}
		addr = strings.Join(hp, ":")
	}
	if nodes[addr] == nil { // fail fast while the server is down (no retries)
		nodes[addr] = redis.NewClient(&redis.Options{Addr: addr, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1})
	}
	return nodes[addr], nil
}

func lock() (*handle, error) { // YOUR LIBRARY: lock (one try): a handle, or nil when taken
	node, err := connect()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	rand.Read(b)
	h := &handle{node, hex.EncodeToString(b)}
	if ok, err := node.SetNX(ctx, key, h.token, ttl).Result(); !ok {
		return nil, err
	}
	return h, nil
}

func check(h *handle) (bool, error) { // YOUR LIBRARY: check: does it still hold the lock?
	v, err := h.node.Get(ctx, key).Result()
	return err == nil && v == h.token, err
}

func extend(h *handle) (bool, error) { // YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): false when lost
	n, err := extendScript.Run(ctx, h.node, []string{key}, h.token, ttl.Milliseconds()).Int()
	return n == 1, err
}

func unlock(h *handle) error { // YOUR LIBRARY: unlock
	return unlockScript.Run(ctx, h.node, []string{key}, h.token).Err()
}

// ---- The protocol: nothing to change below. ----

// validity is what is left for sure: the TTL counted from the call, less 1% + 2 ms.
func validity(calledAt time.Time) int64 {
	return max(0, ttl-time.Since(calledAt)-ttl/100-2*time.Millisecond).Milliseconds()
}

// holding sleeps until `until`, renewing every ttl/3 with REDLOCK_RENEW=1
// (HELD after each); false when a renewal failed (lost).
func holding(h *handle, calledAt *time.Time, until time.Time) bool {
	for time.Now().Before(until) {
		due := until
		if renew {
			due = calledAt.Add(ttl / 3)
		}
		if !time.Now().Before(due) {
			*calledAt = time.Now()
			if ok, _ := extend(h); !ok {
				return false
			}
			store.Do(ctx, "HELD", me, res, validity(*calledAt))
		}
		if until.Before(due) {
			due = until
		}
		time.Sleep(time.Until(due))
	}
	return true
}

func main() {
	if s := env("REDLOCK_SENTINEL"); s != "" {
		sentinel = redis.NewSentinelClient(&redis.Options{Addr: s, DialTimeout: timeout, ReadTimeout: timeout, MaxRetries: -1})
	}
	if err := store.Do(ctx, "LOCKKEY", res, key).Err(); err != nil {
		panic(err)
	}
	_ = store.Do(ctx, "READY", me).Err() // an error: a lab older than READY
	start := time.Now()                  // the run's clock starts at READY's reply
	time.Sleep(ms("REDLOCK_START_MS"))
	writes, _ := strconv.Atoi(env("REDLOCK_WRITES"))
	tries, _ := strconv.Atoi(env("REDLOCK_RETRY_COUNT"))
	for time.Since(start) < ms("REDLOCK_DURATION_MS") {
		time.Sleep(draw("REDLOCK_THINK_MS"))
		var h *handle
		var calledAt time.Time
		for attempt := 0; attempt < max(1, tries) && h == nil; attempt++ {
			if attempt > 0 {
				time.Sleep(ms("REDLOCK_RETRY_DELAY_MS"))
			}
			calledAt = time.Now() // the key's TTL counts from no earlier
			h, _ = lock()         // an error (the server is gone): a failed try
		}
		if h == nil {
			continue
		}
		heldAt := time.Now()
		var fence []any
		if env("REDLOCK_FENCING") == "1" {
			fence = append(fence, store.Do(ctx, "FENCE", me, res).Val())
		}
		valid := validity(calledAt)
		store.Do(ctx, "HELD", me, res, valid)
		hold := time.Duration(valid) * time.Millisecond
		if env("REDLOCK_HOLD_MS") != "validity" {
			hold = draw("REDLOCK_HOLD_MS")
		}
		lost := false
		for k := 0; k < writes && !lost; k++ {
			at := time.Duration(0)
			if writes > 1 {
				at = hold * time.Duration(k) / time.Duration(writes-1)
			}
			// A failed renewal, or the check says it is gone (or fails): lost.
			lost = !holding(h, &calledAt, heldAt.Add(at))
			if !lost && k > 0 {
				ok, _ := check(h)
				lost = !ok
			}
			if !lost { // an error: REJECTED, a later holder's fence came first
				store.Do(ctx, append([]any{"WRITE", me, res}, fence...)...)
			}
		}
		if !lost {
			holding(h, &calledAt, heldAt.Add(hold))
		}
		store.Do(ctx, "RELEASED", me, res) // at once when lost
		_ = unlock(h)                      // expired, or the server is gone
	}
}
