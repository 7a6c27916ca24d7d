package redlocksim;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;
import org.redisson.config.SingleServerConfig;
import org.redisson.config.SubscriptionMode;

/**
 * How the Redisson drivers connect, as a user with a short TTL configures
 * Redisson: the watchdog's timeout (`lockWatchdogTimeout`, the lease a lock
 * taken without one gets, renewed every third of it) is the scenario's TTL;
 * commands time out after REDLOCK_REQUEST_TIMEOUT_MS and are not retried
 * (Redisson's default is 3 retries 1.5 s apart: a lock must not wait on a
 * master that is down), unless the driver asks for Redisson's retries
 * ({@code retries}): then 3 attempts, half the request timeout apart, the
 * proportions of Redisson's defaults (retryAttempts 3, retryInterval 1.5 s,
 * timeout 3 s). A retry resends a command whose reply did not come within
 * the timeout, whether or not the first one reached the master. With the
 * retries the connections also skip their opening PING
 * (pingConnectionInterval 0; the keepalive it starts, every 30 s, is longer
 * than any run): Redisson 3.23.5 and 3.24.1, which the retries are for, hang
 * for good in their first lock call, lazily connecting, when that PING times
 * out on a JVM that has only just started (measured alone against
 * redis-server: 7 hangs in 14 starts with it, none in 22 without).
 */
final class Redissons {
    private Redissons() {}

    private static Config base(Lab lab) {
        Config config = new Config();
        config.setLockWatchdogTimeout(lab.ttlMs);
        // Few threads: the driver takes one lock at a time.
        config.setThreads(2);
        config.setNettyThreads(2);
        // Connect on first use rather than in Redisson.create(), which gives
        // up, and throws, when a master is down or cut off, or slow to answer
        // a JVM that has only just started; the lock calls then fail and are
        // tried again, as for a master that goes down later.
        config.setLazyInitialization(true);
        return config;
    }

    /** `single`: the master the sentinel names (REDLOCK_SENTINEL, REDLOCK_MASTER_NAME),
     * else the first node. */
    static RedissonClient single(Lab lab) {
        return single(lab, false);
    }

    /** As {@link #single(Lab)}, with Redisson's own retries when `retries`. */
    static RedissonClient single(Lab lab, boolean retries) {
        Config config = base(lab);
        int timeout = (int) lab.timeoutMs;
        if (lab.sentinel != null) {
            SentinelServersConfig sentinel = config.useSentinelServers()
                    .setMasterName(lab.masterName)
                    .addSentinelAddress("redis://" + lab.sentinel)
                    // One sentinel: Redisson's defaults want at least two and
                    // look for more through it.
                    .setCheckSentinelsList(false)
                    .setSentinelsDiscovery(false)
                    .setReadMode(ReadMode.MASTER)
                    .setSubscriptionMode(SubscriptionMode.MASTER)
                    // Ask the sentinel for the master every 250 ms (default 1 s:
                    // four TTLs here).
                    .setScanInterval(250)
                    .setTimeout(timeout)
                    .setConnectTimeout(timeout)
                    .setRetryAttempts(retries ? 3 : 0)
                    .setMasterConnectionMinimumIdleSize(1)
                    .setSlaveConnectionMinimumIdleSize(1)
                    .setSubscriptionConnectionMinimumIdleSize(1);
            if (retries) {
                sentinel.setRetryInterval(Math.max(1, timeout / 2)).setPingConnectionInterval(0);
            }
        } else {
            master(config, lab, lab.nodes[0], retries);
        }
        return Redisson.create(config);
    }

    /** One client on one master (`redlock`: one per REDLOCK_NODES entry). */
    static RedissonClient one(Lab lab, String node) {
        Config config = base(lab);
        master(config, lab, node, false);
        return Redisson.create(config);
    }

    private static void master(Config config, Lab lab, String node, boolean retries) {
        int timeout = (int) lab.timeoutMs;
        SingleServerConfig single = config.useSingleServer()
                .setAddress("redis://" + node)
                .setTimeout(timeout)
                .setConnectTimeout(timeout)
                .setRetryAttempts(retries ? 3 : 0)
                .setConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionMinimumIdleSize(1);
        if (retries) {
            single.setRetryInterval(Math.max(1, timeout / 2)).setPingConnectionInterval(0);
        }
    }
}
