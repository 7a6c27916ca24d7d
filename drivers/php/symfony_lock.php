<?php
/**
 * Symfony Lock's `RedisStore` (one Redis, over phpredis) under redlock-sim
 * lab: a driver, as a user writes one.
 *
 *     apt-get install php-cli php-redis php-symfony-lock   # Debian bookworm: Symfony Lock 5.4.53, phpredis 5.3.7
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml --servers redis -- php drivers/php/symfony_lock.php
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). Once connected it says READY and waits for the reply, which
 * starts the run's clock. It loops until REDLOCK_DURATION_MS has passed:
 * think, take the lock with `$factory->createLock($resource, $ttl, false)`
 * and `acquire()` (not blocking, polled REDLOCK_RETRY_COUNT times), tell the
 * store it holds it (HELD, with the lock's `getRemainingLifetime()`), write
 * to the store REDLOCK_WRITES times over the hold, asking before each write
 * after the first whether the lock is still held (`isAcquired()`, which asks
 * the server, and `isExpired()`, its own lifetime), tell the store it let go
 * (RELEASED: at once when a check says the lock is gone or fails), release.
 * With REDLOCK_RENEW=1 it calls `refresh()` every ttl/3 and says HELD after
 * each. In the `single` topology it asks the sentinel for the master
 * (phpredis's `RedisSentinel`) at its start and again after a failed call,
 * on a new connection, as a deployment with a sentinel does; otherwise it
 * locks the one node. `acquire()` is two scripts: `save` puts the token in
 * for the store's initial TTL (300 s, RedisStore's default, left as users
 * leave it), then `refresh()` cuts it to the lock's TTL.
 */
require __DIR__ . '/lab.php';
require_once 'Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;

$lab = new Lab();

/** A factory on the master, as a deployment builds one (the store's own
 * initial TTL, 300 s, left as it is). */
function factory(Lab $lab): LockFactory
{
    [$host, $port] = $lab->master();
    $redis = new Redis();
    if (!$lab->connect($redis, $host, $port)) {
        throw new RedisException("the master at $host:$port does not answer");
    }
    return new LockFactory(new RedisStore($redis));
}

// Symfony keeps the lock under the resource's own name: a sorted set, one
// member per token scored by its expiry on the server's clock, plus `__write__`.
$lab->lockKey($lab->resource);
try {
    $factory = factory($lab);
} catch (Exception $e) {
    $factory = null; // no master yet: the first lock call asks again
}
$lab->ready();
Lab::sleep($lab->startMs);
while ($lab->running()) {
    $lab->think();
    $lock = null;
    $got = $lab->poll(function () use ($lab, &$factory, &$lock) {
        try {
            $factory ??= factory($lab);
            $lock ??= $factory->createLock($lab->resource, $lab->ttlMs / 1000, false);
            return $lock->acquire();
        } catch (Exception $e) {
            $factory = $lock = null; // the master is gone: ask the sentinel again
            return false;
        }
    });
    if (!$got) {
        continue;
    }
    $heldAt = $lab->now();
    // With clients.fencing the store hands out the tokens and refuses stale ones.
    $fence = $lab->fence();
    $valid = (int) ($lock->getRemainingLifetime() * 1000);
    $lab->held($valid);
    $hold = $lab->hold($valid);
    // Symfony's own check: the server still has the token, and the lifetime
    // the lock computed has not run out. An error is a loss too.
    $check = function () use ($lock, &$factory) {
        try {
            return $lock->isAcquired() && !$lock->isExpired();
        } catch (Exception $e) {
            $factory = null;
            return false;
        }
    };
    $refresh = function () use ($lab, $lock, &$factory) {
        try {
            $lock->refresh();
        } catch (Exception $e) {
            $factory = null;
            return false;
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
        // expired, taken by another, or the master is gone
    }
}
exit(0);
