<?php
/**
 * What every PHP driver reads from redlock-sim lab's environment (REDLOCK_*,
 * see docs/cli-and-outputs.md, `redlock-sim lab`), the loop's timing, and the
 * store: a tiny RESP client over one socket, as a user in a hurry writes one,
 * so that the store's commands (LOCKKEY, READY, FENCE, WRITE, HELD, RELEASED)
 * need none of the libraries under test. As drivers/java/.../Lab.java does
 * for Java; required by the drivers next to it.
 */

/** An error reply of the store (`-REJECTED ...` to a fenced write). */
final class Rejected extends RuntimeException
{
}

final class Lab
{
    public string $me;
    public string $resource;
    public int $ttlMs;
    public int $writes;
    /** The request timeout, in seconds (phpredis's connect and read timeouts). */
    public float $timeout;
    public int $retryCount;
    public int $retryDelayMs;
    public int $startMs;
    public int $durationMs;
    public bool $renew;
    public bool $fencing;
    /** When poll()'s last try began (ms, now()): a lock's TTL counts from no earlier. */
    public float $lastTry = 0;
    private $store;
    private int $started;
    private float $renewedAt = 0;

    public function __construct()
    {
        $this->me = self::env('REDLOCK_CLIENT');
        $this->resource = self::env('REDLOCK_RESOURCE');
        $this->ttlMs = (int) self::env('REDLOCK_TTL_MS');
        $this->writes = (int) self::env('REDLOCK_WRITES');
        $this->timeout = (int) self::env('REDLOCK_REQUEST_TIMEOUT_MS') / 1000;
        $this->retryCount = (int) self::env('REDLOCK_RETRY_COUNT');
        $this->retryDelayMs = (int) self::env('REDLOCK_RETRY_DELAY_MS');
        $this->startMs = (int) self::env('REDLOCK_START_MS');
        $this->durationMs = (int) self::env('REDLOCK_DURATION_MS');
        $this->renew = getenv('REDLOCK_RENEW') === '1';
        $this->fencing = getenv('REDLOCK_FENCING') === '1';
        self::env('REDLOCK_HOLD_MS');
        self::env('REDLOCK_THINK_MS');
        $addr = self::env('REDLOCK_STORE');
        $this->store = @stream_socket_client("tcp://$addr", $errno, $error, 5);
        if (!$this->store) {
            fwrite(STDERR, "the store at $addr: $error\n");
            exit(2);
        }
        stream_set_timeout($this->store, 3600); // READY waits for every client
        $this->started = hrtime(true);
    }

    public static function env(string $name): string
    {
        $v = getenv($name);
        if ($v === false) {
            fwrite(STDERR, "$name is not set: run this under `redlock-sim lab`\n");
            exit(2);
        }
        return $v;
    }

    /** [host, port] of each of REDLOCK_NODES (the masters). */
    public function nodes(): array
    {
        return array_map([self::class, 'hostPort'], explode(',', self::env('REDLOCK_NODES')));
    }

    public static function hostPort(string $addr): array
    {
        $i = strrpos($addr, ':');
        return [substr($addr, 0, $i), (int) substr($addr, $i + 1)];
    }

    /** [host, port] of the master: asked of the sentinel (phpredis's
     * RedisSentinel) in `single`, the one node otherwise. Throws
     * RedisException when the sentinel does not answer or knows none. */
    public function master(): array
    {
        $sentinel = getenv('REDLOCK_SENTINEL');
        if ($sentinel === false) {
            return $this->nodes()[0];
        }
        [$host, $port] = self::hostPort($sentinel);
        $addr = (new RedisSentinel($host, $port, $this->timeout, null, 0, $this->timeout))
            ->getMasterAddrByName(self::env('REDLOCK_MASTER_NAME'));
        if (!$addr) {
            throw new RedisException('the sentinel knows no master');
        }
        return [$addr[0], (int) $addr[1]];
    }

    /** (Re)connects a phpredis client, with the request timeout for the
     * connect and every read; false when the server is not there. */
    public function connect(Redis $r, string $host, int $port): bool
    {
        try {
            return $r->connect($host, $port, $this->timeout, null, 0, $this->timeout);
        } catch (RedisException $e) {
            return false;
        }
    }

    /** Sends one command to the store; its reply, or Rejected for an error reply. */
    public function call(string ...$args)
    {
        $cmd = '*' . count($args) . "\r\n";
        foreach ($args as $a) {
            $cmd .= '$' . strlen($a) . "\r\n$a\r\n";
        }
        fwrite($this->store, $cmd);
        $line = fgets($this->store);
        if ($line === false) {
            fwrite(STDERR, "the store closed the connection\n");
            exit(1);
        }
        $body = substr($line, 1, -2);
        switch ($line[0]) {
            case '-':
                throw new Rejected($body);
            case '$':
                return $body < 0 ? null : substr(stream_get_contents($this->store, $body + 2), 0, -2);
            default:
                return $body;
        }
    }

    /** LOCKKEY: the key the library keeps the lock under. */
    public function lockKey(string $key, bool $byClient = false): void
    {
        $this->call('LOCKKEY', $this->resource, $key, ...($byClient ? ['BYCLIENT'] : []));
    }

    /** READY, then the run's clock starts at the reply (an older lab answers
     * an error: go on). */
    public function ready(): void
    {
        try {
            $this->call('READY', $this->me);
        } catch (Rejected $e) {
        }
        $this->started = hrtime(true);
    }

    /** Milliseconds since the run's clock started, on the monotonic clock. */
    public function now(): float
    {
        return (hrtime(true) - $this->started) / 1e6;
    }

    public function running(): bool
    {
        return $this->now() < $this->durationMs;
    }

    public static function sleep(float $ms): void
    {
        if ($ms > 0) {
            usleep((int) ($ms * 1000));
        }
    }

    /** A draw from an `A..B` range of milliseconds (REDLOCK_THINK_MS, REDLOCK_HOLD_MS). */
    public static function draw(string $name): float
    {
        $ab = explode('..', self::env($name));
        $lo = (float) $ab[0];
        $hi = (float) ($ab[1] ?? $lo);
        return $lo + mt_rand() / mt_getrandmax() * ($hi - $lo);
    }

    public function think(): void
    {
        self::sleep(self::draw('REDLOCK_THINK_MS'));
    }

    /** Up to REDLOCK_RETRY_COUNT tries, REDLOCK_RETRY_DELAY_MS apart (drawn
     * from [d/2, d]), as a user polls a lock call that does not wait; an
     * exception counts as a failed try. */
    public function poll(callable $try): bool
    {
        for ($i = 0; $i < max(1, $this->retryCount); $i++) {
            if ($i > 0) {
                self::sleep($this->retryDelayMs * (0.5 + mt_rand() / mt_getrandmax() / 2));
            }
            $this->lastTry = $this->now();
            try {
                if ($try()) {
                    return true;
                }
            } catch (Exception $e) {
            }
        }
        return false;
    }

    /** What is left for sure of a lock of `$ttlMs` taken by a call begun at
     * `$calledAt` (ms, now()): the TTL counted from the call, less Redlock's
     * allowance for clock drift (1% + 2 ms). */
    public function validity(float $ttlMs, float $calledAt): int
    {
        return (int) max(0, $ttlMs - ($this->now() - $calledAt) - ($ttlMs * 0.01 + 2));
    }

    /** FENCE with REDLOCK_FENCING=1: the token to send with each WRITE. */
    public function fence(): array
    {
        return $this->fencing ? [$this->call('FENCE', $this->me, $this->resource)] : [];
    }

    /** HELD, after the lock call and after each renewal. */
    public function held(int $validMs): void
    {
        $this->renewedAt = $this->now();
        $this->call('HELD', $this->me, $this->resource, (string) max(0, $validMs));
    }

    public function released(): void
    {
        $this->call('RELEASED', $this->me, $this->resource);
    }

    public function write(array $fence): void
    {
        try {
            $this->call('WRITE', $this->me, $this->resource, ...$fence);
        } catch (Rejected $e) {
            // REJECTED: a later holder's token came first
        }
    }

    /** The hold: REDLOCK_HOLD_MS drawn, or the validity when it says `validity`. */
    public function hold(int $validMs): float
    {
        return self::env('REDLOCK_HOLD_MS') === 'validity' ? $validMs : self::draw('REDLOCK_HOLD_MS');
    }

    /** When, from the start of the hold, write k of REDLOCK_WRITES is due. */
    public function writeAt(int $k, float $hold): float
    {
        return $this->writes > 1 ? $hold * $k / ($this->writes - 1) : 0;
    }

    /** Sleeps until `$at` (ms, now()); with REDLOCK_RENEW=1 calls `$renew`
     * every ttl/3 from the last HELD on the way. False when a renewal said the
     * lock is lost (it sent nothing then; the caller says RELEASED). */
    public function waitUntil(float $at, ?callable $renew = null): bool
    {
        while (($now = $this->now()) < $at) {
            if (!$this->renew || $renew === null) {
                self::sleep($at - $now);
                break;
            }
            $due = $this->renewedAt + $this->ttlMs / 3;
            if ($due <= $now) {
                if (!$renew()) {
                    return false;
                }
                continue;
            }
            self::sleep(min($at, $due) - $now);
        }
        return true;
    }
}
