// redsync 4.0.x (Redlock) over go-redis v8 under redlock-sim lab: a driver,
// as a user of that release writes one.
//
//	bash drivers/go/build.sh   # bin/redsync-4.0.3, bin/redsync-4.0.4 (go.redsync-4.0.*.mod)
//	redlock-sim lab scenarios/libraries/extend_after_pause-redsync.toml -- drivers/go/bin/redsync-4.0.3
//
// The same driver as redsync/main.go, for redsync's 4.0 releases, which have
// go-redis v8's adapter (redis/goredis/v8) and no `Until()`: the driver
// keeps the validity itself, as their users had to. The lab starts one copy
// per client, with the scenario in its environment (REDLOCK_*). Once
// connected it says READY and waits for the reply, which starts the run's
// clock. It loops until REDLOCK_DURATION_MS has passed: think, take the lock
// on the masters (REDLOCK_NODES, one go-redis client each) with redsync's
// Mutex, tell the store it holds it (HELD, for the TTL counted from the Lock
// call less Redlock's drift allowance, 1% + 2 ms), write to the store
// REDLOCK_WRITES times over the hold, checking that validity first, tell the
// store it let go (RELEASED), unlock. When that validity has run out, it says
// RELEASED at once and writes no more. With REDLOCK_RENEW=1 the driver calls
// `Extend()` every ttl/3 from a goroutine; each extension that redsync
// reports as done is a new HELD (the TTL counted from the Extend call), and
// one it reports as failed means the lock is lost: RELEASED at once, and the
// driver writes no more.
// redsync 4.0.3's `Extend` reports success even when a master refused the
// extension (redsync PR #61): this driver exposes it with
// scenarios/libraries/extend_after_pause-redsync.toml.
package main

import (
	"context"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis/v8"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v8"
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

func main() {
	ctx := context.Background()
	me := env("REDLOCK_CLIENT")
	resource := env("REDLOCK_RESOURCE")
	ttl := ms("REDLOCK_TTL_MS")
	writes, _ := strconv.Atoi(env("REDLOCK_WRITES"))
	timeout := ms("REDLOCK_REQUEST_TIMEOUT_MS")
	tries, _ := strconv.Atoi(env("REDLOCK_RETRY_COUNT"))
	renew := env("REDLOCK_RENEW") == "1"

	// Fail fast on a master that is down (no retries, go-redis's default is
	// 3), as a lock must not wait on one.
	var pools []redsyncredis.Pool
	for _, addr := range strings.Split(env("REDLOCK_NODES"), ",") {
		pools = append(pools, goredis.NewPool(redis.NewClient(&redis.Options{
			Addr: addr, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1,
		})))
	}
	rs := redsync.New(pools...)
	// No read timeout: READY waits for every client.
	store := redis.NewClient(&redis.Options{Addr: env("REDLOCK_STORE"), ReadTimeout: -1})
	// redsync keeps the lock under the mutex's name, as given.
	if err := store.Do(ctx, "LOCKKEY", resource, resource).Err(); err != nil {
		panic(err)
	}
	// Blocks until every client is ready: the run's clock starts at the reply.
	_ = store.Do(ctx, "READY", me).Err() // an error: a lab older than READY
	// What is left of the lock for sure after a call that set its TTL: the
	// TTL counted from the call, less Redlock's allowance for clock drift.
	drift := ttl/100 + 2*time.Millisecond
	validUntil := func(calledAt time.Time) time.Time { return calledAt.Add(ttl - drift) }

	start := time.Now()
	time.Sleep(ms("REDLOCK_START_MS"))
	for time.Since(start) < ms("REDLOCK_DURATION_MS") {
		time.Sleep(msRange("REDLOCK_THINK_MS"))
		mutex := rs.NewMutex(resource, redsync.WithExpiry(ttl), redsync.WithTries(tries),
			redsync.WithRetryDelay(ms("REDLOCK_RETRY_DELAY_MS")))
		// Each attempt's keys count from its SET, no earlier than the call.
		calledAt := time.Now()
		if err := mutex.Lock(); err != nil {
			continue // taken, or the masters are gone: try again after thinking
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
		until := validUntil(calledAt)
		validity := max(0, time.Until(until))
		store.Do(ctx, "HELD", me, resource, validity.Milliseconds())
		hold := validity
		if env("REDLOCK_HOLD_MS") != "validity" {
			hold = msRange("REDLOCK_HOLD_MS")
		}

		// `mu` guards `until` and `released`: RELEASED, once, from the loop
		// or the watchdog; no HELD after it.
		var mu sync.Mutex
		released := false
		release := func() {
			mu.Lock()
			defer mu.Unlock()
			if !released {
				released = true
				store.Do(ctx, "RELEASED", me, resource)
			}
		}
		// The watchdog: Extend every ttl/3 until the hold ends or an
		// extension fails.
		done := make(chan struct{})
		var wg sync.WaitGroup
		if renew {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ticker := time.NewTicker(ttl / 3)
				defer ticker.Stop()
				for {
					select {
					case <-done:
						return
					case <-ticker.C:
					}
					calledAt := time.Now()
					if ok, _ := mutex.Extend(); !ok {
						release()
						return
					}
					mu.Lock()
					until = validUntil(calledAt)
					if !released {
						store.Do(ctx, "HELD", me, resource, time.Until(until).Milliseconds())
					}
					mu.Unlock()
				}
			}()
		}
		stillHeld := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return !released && time.Now().Before(until)
		}

		lost := false
		for k := 0; k < writes; k++ {
			at := time.Duration(0)
			if writes > 1 {
				at = hold * time.Duration(k) / time.Duration(writes-1)
			}
			time.Sleep(time.Until(heldAt.Add(at)))
			if (k > 0 || renew) && !stillHeld() {
				lost = true // the lock's validity ran out, or an extension failed
				break
			}
			if err := store.Do(ctx, append([]any{"WRITE", me, resource}, fence...)...).Err(); err != nil {
				if !strings.HasPrefix(err.Error(), "REJECTED") {
					panic(err)
				} // REJECTED: a later holder's token came first
			}
		}
		if !lost {
			time.Sleep(time.Until(heldAt.Add(hold)))
		}
		release()
		close(done)
		wg.Wait()
		_, _ = mutex.Unlock() // false: expired, taken by another, or the masters are gone
	}
}
