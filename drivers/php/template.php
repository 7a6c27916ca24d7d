<?php
/**
 * A template driver for `redlock-sim lab`: copy it to judge YOUR lock library.
 *
 *     redlock-sim lab scenarios/gc_pause.toml -- php drivers/php/template.php
 *
 * It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY,
 * READY, the loop, FENCE, HELD (after the lock and after every renewal),
 * WRITE with a check before each write after the first, RELEASED the moment
 * the lock is lost. Its lock is a placeholder: the simplest correct lock on
 * one Redis, with phpredis's `Redis` (`SET key token NX PX ttl`, a
 * compare-and-delete script), on the first node of REDLOCK_NODES, or in
 * `single` on the master the sentinel names. Replace the five functions
 * marked `YOUR LIBRARY` (and KEY); the rest needs no change. Needs phpredis
 * (`apt-get install php-redis`, or `pecl install redis`).
 */
$env = getenv();
[$me, $resource] = [$env['REDLOCK_CLIENT'], $env['REDLOCK_RESOURCE']];
[$ttl, $writes] = [(int) $env['REDLOCK_TTL_MS'], (int) $env['REDLOCK_WRITES']];
$timeout = (int) $env['REDLOCK_REQUEST_TIMEOUT_MS'] / 1000;
$renew = $env['REDLOCK_RENEW'] === '1';
function now(): float { return hrtime(true) / 1e6; } // ms, monotonic
function sleep_ms(float $ms): void { if ($ms > 0) usleep((int) ($ms * 1000)); }
function draw(string $name): float // ms, drawn from REDLOCK_X_MS = "A..B" (or "A")
{
    $ab = explode('..', getenv($name));
    return $ab[0] + mt_rand() / mt_getrandmax() * (($ab[1] ?? $ab[0]) - $ab[0]);
}
function client(string $addr, float $timeout): Redis // $timeout 0: none (the store: READY waits)
{
    $r = new Redis();
    $i = strrpos($addr, ':');
    $r->connect(substr($addr, 0, $i), (int) substr($addr, $i + 1), $timeout, null, 0, $timeout);
    $timeout || $r->setOption(Redis::OPT_READ_TIMEOUT, -1);
    return $r;
}

// ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: throw) ----
const EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
$key = $resource; // the key your library keeps the lock under (LOCKKEY below)
function connect(): Redis // YOUR LIBRARY: connect (the master, asked of the sentinel in `single`)
{
    global $env, $timeout;
    static $nodes = [];
    $addr = explode(',', $env['REDLOCK_NODES'])[0];
    if (isset($env['REDLOCK_SENTINEL'])) {
        $master = client($env['REDLOCK_SENTINEL'], $timeout)
            ->rawCommand('SENTINEL', 'get-master-addr-by-name', $env['REDLOCK_MASTER_NAME']);
        $addr = $master ? implode(':', $master) : throw new RedisException('no master');
    }
    if (!($nodes[$addr] ?? null)?->isConnected()) {
        $nodes[$addr] = client($addr, $timeout); // again, after an error closed it
    }
    return $nodes[$addr];
}
function lock(): ?array // YOUR LIBRARY: lock (one try): a handle, or null when taken
{
    global $key, $ttl;
    [$node, $token] = [connect(), bin2hex(random_bytes(16))];
    return $node->set($key, $token, ['NX', 'PX' => $ttl]) ? [$node, $token] : null;
}
function check(array $h): bool // YOUR LIBRARY: check: does it still hold the lock?
{
    global $key;
    return $h[0]->get($key) === $h[1];
}
function extend(array $h): bool // YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): false when lost
{
    global $key, $ttl;
    return $h[0]->eval(EXTEND, [$key, $h[1], $ttl], 1) === 1;
}
function unlock(array $h): void // YOUR LIBRARY: unlock
{
    global $key;
    $h[0]->eval(UNLOCK, [$key, $h[1]], 1);
}

// ---- The protocol: nothing to change below. ----
$store = client($env['REDLOCK_STORE'], 0);
$store->rawCommand('LOCKKEY', $resource, $key);
$store->rawCommand('READY', $me); // an error (a lab older than READY) is no exception
$start = now(); // the run's clock starts at READY's reply
// What is left for sure: the TTL counted from the call, less 1% + 2 ms.
$validity = fn(float $calledAt) => (int) max(0, $ttl - (now() - $calledAt) - ($ttl * 0.01 + 2));
// Sleeps until $until, renewing every ttl/3 with REDLOCK_RENEW=1 (HELD after
// each); false when a renewal failed (lost). $calledAt: the last renewal's call.
$holding = function (array $h, float &$calledAt, float $until) use ($store, $me, $resource, $ttl, $renew, $validity): bool {
    while (($now = now()) < $until) {
        $due = $renew ? $calledAt + $ttl / 3 : $until;
        if ($due <= $now) {
            $calledAt = now();
            try {
                if (!extend($h)) return false;
            } catch (RedisException $e) {
                return false;
            }
            $store->rawCommand('HELD', $me, $resource, $validity($calledAt));
        }
        sleep_ms(min($due, $until) - now());
    }
    return true;
};
sleep_ms((int) $env['REDLOCK_START_MS']);
while (now() - $start < (int) $env['REDLOCK_DURATION_MS']) {
    sleep_ms(draw('REDLOCK_THINK_MS'));
    $h = null;
    for ($attempt = 0; $attempt < max(1, (int) $env['REDLOCK_RETRY_COUNT']) && !$h; $attempt++) {
        sleep_ms($attempt ? (int) $env['REDLOCK_RETRY_DELAY_MS'] : 0);
        $calledAt = now(); // the key's TTL counts from no earlier
        try {
            $h = lock();
        } catch (RedisException $e) {
            // the server is gone: a failed try
        }
    }
    if (!$h) continue;
    $heldAt = now();
    $fence = ($env['REDLOCK_FENCING'] ?? '0') === '1' ? [$store->rawCommand('FENCE', $me, $resource)] : [];
    $valid = $validity($calledAt);
    $store->rawCommand('HELD', $me, $resource, $valid);
    $hold = $env['REDLOCK_HOLD_MS'] === 'validity' ? $valid : draw('REDLOCK_HOLD_MS');
    $lost = false;
    for ($k = 0; $k < $writes && !$lost; $k++) {
        // A failed renewal, or the check says it is gone (or fails): lost.
        $lost = !$holding($h, $calledAt, $heldAt + ($writes > 1 ? $hold * $k / ($writes - 1) : 0));
        try {
            $lost = $lost || ($k > 0 && !check($h));
        } catch (RedisException $e) {
            $lost = true;
        }
        // An error reply (REJECTED: a later holder's fence came first) is no exception.
        $lost || $store->rawCommand('WRITE', $me, $resource, ...$fence);
    }
    $lost || $holding($h, $calledAt, $heldAt + $hold);
    $store->rawCommand('RELEASED', $me, $resource); // at once when lost
    try {
        unlock($h);
    } catch (RedisException $e) {
        // expired, or the server is gone
    }
}
exit(0);
