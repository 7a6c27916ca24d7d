// rueidislock (rueidis's lock, client-side caching on) under redlock-sim lab:
// a driver, as a user writes one.
//
//	cd drivers/go && go build -o bin/rueidislock ./rueidislock   # or: bash drivers/go/build.sh
//	redlock-sim lab scenarios/libraries/failover_race-single.toml --servers redis -- drivers/go/bin/rueidislock
//
// The lab starts one copy per client, with the scenario in its environment
// (REDLOCK_*). It loops until REDLOCK_DURATION_MS has passed: think, take the
// lock with rueidislock's `WithContext` (which waits by itself, woken by the
// cache's invalidations; the driver gives up after REDLOCK_RETRY_COUNT times
// REDLOCK_RETRY_DELAY_MS), tell the store it holds it (HELD), write to the
// store REDLOCK_WRITES times over the hold, asking the lock's context first
// (`ctx.Err()`), tell the store it let go (RELEASED), release (the returned
// cancel). rueidislock runs as its defaults have it but for the TTL
// (KeyValidity = REDLOCK_TTL_MS): client-side caching on, KeyMajority 2, so
// each lock is 3 keys `rueidislock:<i>:<resource>` on the one Redis, held
// while 2 of them are, each extended every KeyValidity/2 whatever
// REDLOCK_RENEW says, and watched through the cache's invalidations. It says
// a lock is lost only by cancelling the context it returned: the driver waits
// on that context and says RELEASED the moment it is done. It tells the
// caller no validity and no extension: the driver reads both off the replies
// to its scripts, through a wrapper around the rueidis client
// (`LockerOption.ClientBuilder`) that changes nothing: HELD with the deadline
// (PXAT) rueidislock gave 2 of the keys, and again each time an extension
// moves it. In the `single` topology rueidis finds the master through the
// sentinel (`ClientOption.Sentinel`), as a deployment with a sentinel does;
// otherwise it locks the first node.
package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

var env = os.Getenv

func ms(name string) time.Duration {
	v, _ := strconv.Atoi(env(name))
	return time.Duration(v) * time.Millisecond
}

// msRange draws a duration from REDLOCK_X_MS = "A..B" (or "A").
func msRange(name string) time.Duration {
	lo, hi, found := strings.Cut(env(name), "..")
	a, _ := strconv.Atoi(lo)
	b := a
	if found {
		b, _ = strconv.Atoi(hi)
	}
	return time.Duration((float64(a) + rand.Float64()*float64(b-a)) * float64(time.Millisecond))
}

// rueidislock's defaults: KeyMajority of 2*KeyMajority-1 keys.
const majority, keys = 2, 3

// rueidislock v1.0.79's extend script (lock.go), sent by EVALSHA, or by EVAL
// after a NOSCRIPT.
const extendScript = `if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`

var extendSHA = func() string { s := sha1.Sum([]byte(extendScript)); return hex.EncodeToString(s[:]) }()

var (
	mu       sync.Mutex
	deadline = map[string]time.Time{} // lock key -> its PXAT deadline, in this acquisition
	holding  context.Context          // the lock's context while the driver says it holds
	reported time.Time                // the deadline the last HELD counted to
	held     func(valid time.Duration)
)

// lockDeadline is the time until which a majority of the keys is set (mu held).
func lockDeadline() time.Time {
	ds := make([]time.Time, 0, keys)
	for _, d := range deadline {
		ds = append(ds, d)
	}
	if len(ds) < majority {
		return time.Time{}
	}
	slices.SortFunc(ds, func(a, b time.Time) int { return b.Compare(a) })
	return ds[majority-1]
}

// watch is the client rueidislock runs its scripts through: each script's
// keys are [key] and its args [token, deadline in unix ms]; an acquire answers
// OK, an extend 1.
type watch struct{ rueidis.Client }

func (w watch) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := slices.Clone(cmd.Commands()) // rueidis recycles cmd once Do returns
	resp := w.Client.Do(ctx, cmd)
	if len(args) != 6 || (args[0] != "EVALSHA" && args[0] != "EVAL") {
		return resp
	}
	ok, _ := resp.ToString()
	n, err := resp.AsInt64()
	extended := err == nil && n == 1 && (args[1] == extendSHA || args[1] == extendScript)
	if ok == "OK" || extended {
		at, _ := strconv.ParseInt(args[5], 10, 64)
		mu.Lock()
		deadline[args[3]] = time.UnixMilli(at)
		if d := lockDeadline(); holding != nil && holding.Err() == nil && d.After(reported) {
			reported = d
			held(time.Until(d))
		}
		mu.Unlock()
	}
	return resp
}

func main() {
	ctx := context.Background()
	me := env("REDLOCK_CLIENT")
	resource := env("REDLOCK_RESOURCE")
	ttl := ms("REDLOCK_TTL_MS")
	writes, _ := strconv.Atoi(env("REDLOCK_WRITES"))
	timeout := ms("REDLOCK_REQUEST_TIMEOUT_MS")
	tries, _ := strconv.Atoi(env("REDLOCK_RETRY_COUNT"))
	delay := ms("REDLOCK_RETRY_DELAY_MS")

	// rueidis's own timeouts: it connects at once, and 50 ms for the dial and
	// the handshake failed on a loaded machine; rueidislock bounds its own
	// calls (20 ms a key to acquire, an extension by the key's deadline).
	option := rueidis.ClientOption{InitAddress: []string{strings.Split(env("REDLOCK_NODES"), ",")[0]}}
	if sentinel := env("REDLOCK_SENTINEL"); sentinel != "" {
		option.InitAddress = []string{sentinel}
		option.Sentinel = rueidis.SentinelOption{MasterSet: env("REDLOCK_MASTER_NAME")}
	}
	locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: option,
		KeyValidity:  ttl,
		ClientBuilder: func(option rueidis.ClientOption) (rueidis.Client, error) {
			client, err := rueidis.NewClient(option)
			if err != nil {
				return nil, err
			}
			return watch{client}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	store := redis.NewClient(&redis.Options{Addr: env("REDLOCK_STORE")})
	// rueidislock keeps the lock under 3 keys, 2 of which make it held.
	for i := range keys {
		if err := store.Do(ctx, "LOCKKEY", resource, fmt.Sprintf("rueidislock:%d:%s", i, resource)).Err(); err != nil {
			panic(err)
		}
	}
	held = func(valid time.Duration) { store.Do(ctx, "HELD", me, resource, max(0, valid).Milliseconds()) }
	store.Do(ctx, "READY", me) // an error (a lab older than READY): go on

	start := time.Now()
	time.Sleep(ms("REDLOCK_START_MS"))
	for time.Since(start) < ms("REDLOCK_DURATION_MS") {
		time.Sleep(msRange("REDLOCK_THINK_MS"))
		mu.Lock()
		clear(deadline)
		mu.Unlock()
		// WithContext waits for the lock as long as its context lives, and
		// the lock lives no longer than that context: give up on the wait by
		// cancelling it, never by a deadline (it would cut the lock short).
		wait, stop := context.WithCancel(ctx)
		giveUp := time.AfterFunc(time.Duration(tries)*delay+timeout, stop)
		lock, unlock, err := locker.WithContext(wait, resource)
		if err != nil || !giveUp.Stop() {
			if err == nil {
				unlock() // given up as it returned: the lock goes with the wait
			}
			stop()
			continue // taken, or the master is gone: try again after thinking
		}
		heldAt := time.Now()
		// With clients.fencing the store hands out the tokens and refuses stale ones.
		var fence []any
		if env("REDLOCK_FENCING") == "1" {
			token, err := store.Do(ctx, "FENCE", me, resource).Result()
			if err != nil {
				panic(err)
			}
			fence = append(fence, token)
		}
		// What is left: until the deadline rueidislock gave its keys (PXAT).
		mu.Lock()
		holding, reported = lock, lockDeadline()
		validity := time.Until(reported)
		held(validity)
		mu.Unlock()
		hold := validity
		if env("REDLOCK_HOLD_MS") != "validity" {
			hold = msRange("REDLOCK_HOLD_MS")
		}

		// Each write when it is due, unless the lock's context is done first:
		// rueidislock's word that the lock is gone.
		lost := false
		for k := 0; k < writes && !lost; k++ {
			at := time.Duration(0)
			if writes > 1 {
				at = hold * time.Duration(k) / time.Duration(writes-1)
			}
			select {
			case <-lock.Done():
			case <-time.After(time.Until(heldAt.Add(at))):
			}
			if lost = lock.Err() != nil; lost {
				break
			}
			if err := store.Do(ctx, append([]any{"WRITE", me, resource}, fence...)...).Err(); err != nil {
				if !strings.HasPrefix(err.Error(), "REJECTED") {
					panic(err)
				} // REJECTED: a later holder's token came first
			}
		}
		if !lost {
			select {
			case <-lock.Done():
			case <-time.After(time.Until(heldAt.Add(hold))):
			}
		}
		mu.Lock()
		holding = nil
		store.Do(ctx, "RELEASED", me, resource)
		mu.Unlock()
		unlock() // deletes the keys still ours, and waits for it
		stop()
	}
}
