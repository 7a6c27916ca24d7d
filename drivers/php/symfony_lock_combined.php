<?php
/**
 * Symfony Lock's Redlock, a `CombinedStore` of one `RedisStore` per master
 * with the `ConsensusStrategy` (over phpredis), under redlock-sim lab: a
 * driver, as a user writes one.
 *
 *     apt-get install php-cli php-redis php-symfony-lock   # Debian bookworm: Symfony Lock 5.4.53, phpredis 5.3.7
 *     redlock-sim lab scenarios/libraries/restart_immediate-redlock.toml --servers redis -- php drivers/php/symfony_lock_combined.php
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). Once connected it says READY and waits for the reply, which
 * starts the run's clock. It loops until REDLOCK_DURATION_MS has passed:
 * think, take the lock on the masters (REDLOCK_NODES) with
 * `$factory->createLock($resource, $ttl, false)` and `acquire()` (not
 * blocking, polled REDLOCK_RETRY_COUNT times), tell the store it holds it
 * (HELD, with the lock's `getRemainingLifetime()`), write to the store
 * REDLOCK_WRITES times over the hold, asking before each write after the
 * first whether the lock is still held (`isAcquired()`, which asks the
 * masters for a majority, and `isExpired()`, its own lifetime), tell the
 * store it let go (RELEASED: at once when a check says the lock is gone),
 * release. With REDLOCK_RENEW=1 it calls `refresh()` every ttl/3 and says
 * HELD after each. phpredis 5.3.7 does not reconnect a connection the server
 * closed: before each acquisition the driver reconnects the masters whose
 * connection is gone, as a long-running worker must. CombinedStore swallows
 * each master's error, so the driver cannot drop a connection whose script
 * timed out: phpredis 5.3.7 keeps it open, and the next call on it reads the
 * late reply (a master cut off, then healed, answers each later call with an
 * earlier call's reply). That is left as it is: it is what its users get.
 */
require __DIR__ . '/lab.php';
require_once 'Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy;

$lab = new Lab();
$masters = [];
$stores = [];
foreach ($lab->nodes() as [$host, $port]) {
    $redis = new Redis();
    $lab->connect($redis, $host, $port); // a master down now is tried again later
    $masters[] = [$redis, $host, $port];
    $stores[] = new RedisStore($redis); // the store's own initial TTL, 300 s, left as it is
}
$factory = new LockFactory(new CombinedStore($stores, new ConsensusStrategy()));

// Symfony keeps the lock under the resource's own name on each master (a
// sorted set: one member per token, the same token on every master, scored by
// its expiry on that master's clock, plus `__write__`).
$lab->lockKey($lab->resource);
$lab->ready();
Lab::sleep($lab->startMs);
while ($lab->running()) {
    $lab->think();
    foreach ($masters as [$redis, $host, $port]) {
        $redis->isConnected() || $lab->connect($redis, $host, $port);
    }
    $lock = $factory->createLock($lab->resource, $lab->ttlMs / 1000, false);
    if (!$lab->poll(fn () => $lock->acquire())) {
        continue;
    }
    $heldAt = $lab->now();
    // With clients.fencing the store hands out the tokens and refuses stale ones.
    $fence = $lab->fence();
    $valid = (int) ($lock->getRemainingLifetime() * 1000);
    $lab->held($valid);
    $hold = $lab->hold($valid);
    // Symfony's own check: a majority still has the token, and the lifetime
    // the lock computed has not run out.
    $check = fn () => $lock->isAcquired() && !$lock->isExpired();
    $refresh = function () use ($lab, $lock) {
        try {
            $lock->refresh();
        } catch (Exception $e) {
            return false; // no majority
        }
        $lab->held((int) ($lock->getRemainingLifetime() * 1000));
        return true;
    };
    $lost = false;
    for ($k = 0; $k < $lab->writes && !$lost; $k++) {
        $lost = !$lab->waitUntil($heldAt + $lab->writeAt($k, $hold), $refresh) || ($k > 0 && !$check());
        if (!$lost) {
            $lab->write($fence);
        }
    }
    $lost || $lab->waitUntil($heldAt + $hold, $refresh);
    $lab->released();
    try {
        $lock->release();
    } catch (Exception $e) {
        // expired, taken by another, or the masters are gone
    }
}
exit(0);
