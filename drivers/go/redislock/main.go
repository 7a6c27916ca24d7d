// bsm/redislock (one Redis) over go-redis under redlock-sim lab: a driver, as
// a user writes one.
//
//	cd drivers/go && go build -o bin/redislock ./redislock   # or: bash drivers/go/build.sh
//	redlock-sim lab scenarios/libraries/failover_race-single.toml -- drivers/go/bin/redislock
//
// The lab starts one copy per client, with the scenario in its environment
// (REDLOCK_*). Once connected it says READY and waits for the reply, which
// starts the run's clock. It loops until REDLOCK_DURATION_MS has passed:
// think, take the lock with redislock's `Obtain` (retrying every
// REDLOCK_RETRY_DELAY_MS, up to REDLOCK_RETRY_COUNT attempts), tell the store
// it holds it (HELD, for the TTL counted from the Obtain call less Redlock's
// drift allowance: redislock computes no validity), write to the store
// REDLOCK_WRITES times over the hold, asking `TTL()` first whether the lock
// is still held, tell the store it let go (RELEASED), release. When `TTL()`
// says 0 or fails, it says RELEASED at once and writes no more. redislock has
// no watchdog of its own: with REDLOCK_RENEW=1 the driver calls `Refresh`
// every ttl/3 from a goroutine, and each refresh is a new HELD; a failed one
// means the lock is lost: RELEASED at once, and the driver writes no more.
// In the `single` topology go-redis
// finds the master through the sentinel (`redis.NewFailoverClient`), as a
// deployment with a sentinel does; otherwise it locks the first node.
package main

import (
	"context"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
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
	delay := ms("REDLOCK_RETRY_DELAY_MS")
	renew := env("REDLOCK_RENEW") == "1"

	// Fail fast while the master is down (no retries, go-redis's default is
	// 3), as a lock must not wait on one.
	var client redis.UniversalClient
	if sentinel := env("REDLOCK_SENTINEL"); sentinel != "" {
		client = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: env("REDLOCK_MASTER_NAME"), SentinelAddrs: []string{sentinel},
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1,
		})
	} else {
		client = redis.NewClient(&redis.Options{
			Addr:        strings.Split(env("REDLOCK_NODES"), ",")[0],
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, MaxRetries: -1,
		})
	}
	locker := redislock.New(client)
	// No read timeout: READY waits for every client.
	store := redis.NewClient(&redis.Options{Addr: env("REDLOCK_STORE"), ReadTimeout: -1})
	// redislock keeps the lock under the key it is given.
	if err := store.Do(ctx, "LOCKKEY", resource, resource).Err(); err != nil {
		panic(err)
	}
	// Blocks until every client is ready: the run's clock starts at the reply.
	_ = store.Do(ctx, "READY", me).Err() // an error: a lab older than READY

	start := time.Now()
	time.Sleep(ms("REDLOCK_START_MS"))
	for time.Since(start) < ms("REDLOCK_DURATION_MS") {
		time.Sleep(msRange("REDLOCK_THINK_MS"))
		// Up to REDLOCK_RETRY_COUNT attempts, REDLOCK_RETRY_DELAY_MS apart.
		retry := redislock.LimitRetry(redislock.LinearBackoff(delay), tries-1)
		wait, cancel := context.WithTimeout(ctx, time.Duration(tries)*delay+timeout)
		// The key's PX counts from its SET, which is no earlier than the call.
		calledAt := time.Now()
		lock, err := locker.Obtain(wait, resource, ttl, &redislock.Options{RetryStrategy: retry})
		cancel()
		if err != nil {
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
		// What is left of the lock for sure: the TTL counted from the call,
		// not from its return, less Redlock's allowance for clock drift
		// (1% + 2 ms).
		drift := ttl/100 + 2*time.Millisecond
		validity := max(0, ttl-time.Since(calledAt)-drift)
		store.Do(ctx, "HELD", me, resource, validity.Milliseconds())
		hold := validity
		if env("REDLOCK_HOLD_MS") != "validity" {
			hold = msRange("REDLOCK_HOLD_MS")
		}

		// RELEASED, once, from the loop or the watchdog; no HELD after it.
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
		// The watchdog: Refresh every ttl/3 until the hold ends or a refresh
		// fails (redislock.ErrNotObtained: the key is gone or another's).
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
					if err := lock.Refresh(ctx, ttl, nil); err != nil {
						release()
						return
					}
					mu.Lock()
					if !released {
						store.Do(ctx, "HELD", me, resource, max(0, ttl-time.Since(calledAt)-drift).Milliseconds())
					}
					mu.Unlock()
				}
			}()
		}
		// redislock's own answer: the key's PTTL if it is still ours, else 0.
		stillHeld := func() bool {
			mu.Lock()
			gone := released
			mu.Unlock()
			if gone {
				return false
			}
			left, err := lock.TTL(ctx)
			return err == nil && left > 0
		}

		lost := false
		for k := 0; k < writes; k++ {
			at := time.Duration(0)
			if writes > 1 {
				at = hold * time.Duration(k) / time.Duration(writes-1)
			}
			time.Sleep(time.Until(heldAt.Add(at)))
			if k > 0 && !stillHeld() {
				lost = true // redislock says the lock is no longer ours
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
		_ = lock.Release(ctx) // expired, taken by another, or the master is gone
	}
}
