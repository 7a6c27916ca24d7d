<?php
/**
 * Laravel's `Illuminate\Cache\RedisLock` (one Redis, over phpredis: the
 * `PhpRedisLock` that `Cache::lock()` builds) under redlock-sim lab: a driver,
 * as a user writes one.
 *
 *     apt-get install php-cli php-redis php-illuminate-cache php-illuminate-redis   # Debian bookworm: Laravel 8.83.26, phpredis 5.3.7
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml --servers redis -- php drivers/php/laravel_redis_lock.php
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). Once connected it says READY and waits for the reply, which
 * starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
 * take the lock with `$store->lock($resource, $seconds)->get()` (polled
 * REDLOCK_RETRY_COUNT times), tell the store it holds it (HELD, for the TTL
 * counted from the lock call less the drift allowance: Laravel computes no
 * validity), write to the store REDLOCK_WRITES times over the hold, tell the
 * store it let go (RELEASED), release. Laravel 8's lock takes whole seconds
 * (the TTL rounded, at least 1 s: 0 would be a lock that never expires), has
 * no way to extend a lock (REDLOCK_RENEW is ignored), and no check a user can
 * call (`isOwnedByCurrentProcess()` is protected in 8.83): the writes go
 * unchecked, as with redis-py's `Lock`. The cache store is built as a default
 * Laravel 8 application builds it (`RedisManager` with the `phpredis` client
 * and the `laravel_database_` prefix, `RedisStore` with the `laravel_cache`
 * prefix, locks on the `default` connection). Laravel 8's phpredis connector
 * knows no sentinel: in the `single` topology the driver asks the sentinel
 * for the master (phpredis's `RedisSentinel`) at its start and again after a
 * failed call, as a deployment that resolves the master into its
 * configuration does; otherwise it locks the one node.
 */
require __DIR__ . '/lab.php';
require_once 'Illuminate/Cache/autoload.php';
require_once 'Illuminate/Redis/autoload.php';

use Illuminate\Cache\RedisStore;
use Illuminate\Redis\RedisManager;

$lab = new Lab();
$seconds = max(1, (int) round($lab->ttlMs / 1000));

/** The cache store on the master, as Laravel's CacheManager builds it. */
function cache(Lab $lab): RedisStore
{
    [$host, $port] = $lab->master();
    $redis = new RedisManager(null, 'phpredis', [
        'options' => ['prefix' => 'laravel_database_'],
        'default' => [
            'host' => $host, 'port' => $port, 'database' => 0,
            'timeout' => $lab->timeout, 'read_timeout' => $lab->timeout,
        ],
    ]);
    return (new RedisStore($redis, 'laravel_cache'))->setLockConnection('default');
}

// The key is the connection's prefix, the cache's prefix and the name.
$lab->lockKey("laravel_database_laravel_cache:{$lab->resource}");
try {
    $cache = cache($lab);
    $cache->lockConnection(); // connects
} catch (Exception $e) {
    $cache = null; // no master yet: the first lock call asks again
}
$lab->ready();
Lab::sleep($lab->startMs);
while ($lab->running()) {
    $lab->think();
    $lock = null;
    $got = $lab->poll(function () use ($lab, $seconds, &$cache, &$lock) {
        try {
            $cache ??= cache($lab);
            $lock ??= $cache->lock($lab->resource, $seconds);
            return $lock->get();
        } catch (Exception $e) {
            $cache = $lock = null; // the master is gone: ask the sentinel again
            return false;
        }
    });
    if (!$got) {
        continue;
    }
    $heldAt = $lab->now();
    // With clients.fencing the store hands out the tokens and refuses stale ones.
    $fence = $lab->fence();
    // The key's EX counts from its SET, which is no earlier than the call.
    $valid = $lab->validity($seconds * 1000, $lab->lastTry);
    $lab->held($valid);
    $hold = $lab->hold($valid);
    for ($k = 0; $k < $lab->writes; $k++) {
        $lab->waitUntil($heldAt + $lab->writeAt($k, $hold));
        $lab->write($fence);
    }
    $lab->waitUntil($heldAt + $hold);
    $lab->released();
    try {
        $lock->release();
    } catch (Exception $e) {
        $cache = null; // the master is gone
    }
}
exit(0);
