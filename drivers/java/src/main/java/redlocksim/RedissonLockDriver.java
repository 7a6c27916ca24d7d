package redlocksim;

import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RLock} under redlock-sim lab: a driver, as a user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # Redisson 3.52.0
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.RedissonLockDriver [watchdog|lease|watchdog-nocheck]
 * </pre>
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). It loops until REDLOCK_DURATION_MS has passed: think, take the
 * lock with Redisson, tell the store it holds it (HELD), write to the store
 * REDLOCK_WRITES times over the hold, tell the store it let go (RELEASED),
 * unlock. In the `single` topology Redisson finds the master through the
 * sentinel ({@code useSentinelServers()}), as a deployment with a sentinel does.
 *
 * The lab's nodes have no pub/sub (SUBSCRIBE), which Redisson's waiting
 * {@code tryLock(wait, ...)} uses to learn of an unlock; so the driver polls:
 * {@code tryLock(0, ...)} (which never subscribes) up to REDLOCK_RETRY_COUNT
 * times, REDLOCK_RETRY_DELAY_MS apart.
 *
 * Redisson keeps the lock as a hash under the name it is given ({@code
 * {<uuid>:<thread id>: count}}), taken and renewed by Lua scripts. Modes (the
 * first argument):
 * <ul>
 * <li>{@code watchdog} (the default): {@code tryLock(0, MILLISECONDS)}, no
 * lease: Redisson's watchdog renews the lock to {@code lockWatchdogTimeout}
 * (the TTL here) every third of it until {@code unlock()}. HELD says what
 * {@code remainTimeToLive()} (the key's PTTL) leaves, less the drift allowance;
 * before each write after the first the driver asks {@code
 * isHeldByCurrentThread()} (a HEXISTS on the master), stops writing when it
 * says no, and otherwise says HELD again with the PTTL the watchdog left.</li>
 * <li>{@code lease}: {@code tryLock(0, ttl, MILLISECONDS)}: a lease of the
 * TTL, no watchdog; HELD with the TTL counted from the call less the drift
 * allowance; {@code isHeldByCurrentThread()} before each write after the first.</li>
 * <li>{@code watchdog-nocheck}: the watchdog, used as Redisson's documentation
 * and its issue reports use it ({@code if (lock.tryLock(...)) { work(); unlock(); }}):
 * no check between lock and unlock, the watchdog being what keeps the lock.
 * HELD once, with what the TTL leaves. For the documented watchdog bug
 * (scenarios/libraries/redisson_watchdog_after_partition.toml).</li>
 * </ul>
 */
public final class RedissonLockDriver {
    public static void main(String[] args) {
        String mode = args.length > 0 ? args[0] : "watchdog";
        boolean lease = mode.equals("lease");
        boolean check = !mode.equals("watchdog-nocheck");
        Lab lab = new Lab();
        RedissonClient redisson = Redissons.single(lab);
        // Redisson keeps the lock under the name it is given.
        lab.store.call("LOCKKEY", lab.resource, lab.resource);
        lab.warmUp(name -> {
            RLock warm = redisson.getLock(name);
            if (lease ? warm.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS) : warm.tryLock(0, TimeUnit.MILLISECONDS)) {
                warm.isHeldByCurrentThread();
                warm.unlock();
            }
        });
        Lab.sleep(lab.startMs);
        while (lab.running()) {
            Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
            RLock lock = redisson.getLock(lab.resource);
            boolean got;
            try {
                // A master that is gone: try again after thinking.
                got = lab.poll(() -> lease
                        ? lock.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS)
                        : lock.tryLock(0, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                break;
            }
            if (!got) {
                continue;
            }
            long heldAt = lab.now();
            // With clients.fencing the store hands out the tokens and refuses stale ones.
            Long fence = lab.fencing ? Long.valueOf(lab.store.call("FENCE", lab.me, lab.resource)) : null;
            // The key's PEXPIRE counts from the script, which is no earlier than
            // the call (the last try's: a try that failed left nothing).
            long validity = lab.validity(lab.ttlMs, lab.lastTry);
            lab.store.call("HELD", lab.me, lab.resource, validity);
            long hold = lab.hold(validity);
            for (int k = 0; k < lab.writes; k++) {
                lab.sleepUntil(heldAt + lab.writeAt(k, hold));
                if (k > 0 && check) {
                    try {
                        if (!lock.isHeldByCurrentThread()) {
                            break; // expired, or taken by another
                        }
                        if (!lease) {
                            // The watchdog renewed it: what it left, as Redisson says.
                            long asked = lab.now();
                            long left = lock.remainTimeToLive();
                            if (left <= 0) {
                                break;
                            }
                            lab.store.call("HELD", lab.me, lab.resource, lab.validity(left, asked));
                        }
                    } catch (RuntimeException e) {
                        break; // the master does not answer: it may be gone
                    }
                }
                lab.store.write(lab.me, lab.resource, fence);
            }
            lab.sleepUntil(heldAt + hold);
            lab.store.call("RELEASED", lab.me, lab.resource);
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // expired, taken by another (IllegalMonitorStateException), or the master is gone
            }
        }
        redisson.shutdown(0, 0, TimeUnit.MILLISECONDS);
        System.exit(0);
    }
}
