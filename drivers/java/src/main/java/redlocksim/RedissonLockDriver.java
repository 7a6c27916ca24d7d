package redlocksim;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RLock} under redlock-sim lab: a driver, as a user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # Redisson 3.52.0
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.RedissonLockDriver \
 *         [watchdog|lease|watchdog-nocheck|reentrant-threads|reentrant-lease]
 * </pre>
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). Once connected and warm (a first lock of another name: see
 * {@link Lab#warmUp}) it says READY and waits for the reply, which starts the
 * run's clock. It loops until REDLOCK_DURATION_MS has passed: think, take the
 * lock with Redisson, tell the store it holds it (HELD, with the TTL counted
 * from the lock call less the drift allowance), write to the store
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
 * (the TTL here) every third of it until {@code unlock()}. Before each write
 * after the first the driver asks {@code isHeldByCurrentThread()} (a HEXISTS
 * on the master) and {@code remainTimeToLive()} (the key's PTTL). When the
 * first says no, the second says 0 or less, or either fails (the master does
 * not answer), it says RELEASED at once, writes no more, unlocks (errors
 * ignored), thinks and loops; when the PTTL ends later than the last HELD
 * said, the watchdog renewed the lock since, and it says HELD again with what
 * the PTTL leaves, less the drift allowance.</li>
 * <li>{@code lease}: {@code tryLock(0, ttl, MILLISECONDS)}: a lease of the
 * TTL, no watchdog; {@code isHeldByCurrentThread()} before each write after
 * the first, RELEASED at once when it says no or fails.</li>
 * <li>{@code watchdog-nocheck}: the watchdog, used as Redisson's documentation
 * and its issue reports use it ({@code if (lock.tryLock(...)) { work(); unlock(); }}):
 * no check between lock and unlock, the watchdog being what keeps the lock.
 * HELD once; RELEASED at the end of the hold. For the documented watchdog bug
 * (scenarios/libraries/redisson_watchdog_after_partition.toml).</li>
 * <li>{@code reentrant-threads}: as {@code watchdog-nocheck} (the watchdog,
 * trusted), with the acquisitions taken in turn by two threads of the JVM (a
 * pool of two workers: the first acquisition on one, the second on the other,
 * and so on), each acquisition nested once, as a method that takes the lock
 * and calls another that takes it too: re-entered ({@code tryLock(0,
 * MILLISECONDS)} again, which only counts up) right after the first write,
 * that level released ({@code unlock()}) right after the second write, the
 * outer level at the end. So one thread's {@code lock(); lock(); unlock();
 * unlock();} comes before another thread's lock: redisson/redisson#6144
 * (scenarios/libraries/redisson_watchdog_after_reentry.toml).</li>
 * <li>{@code reentrant-lease}: as {@code lease}, nested once as above, trusted
 * (no check: the hold is shorter than the lease the lock call and the
 * re-entry set), and with Redisson's own retries on (3 attempts, half the
 * request timeout apart, see {@link Redissons}): an unlock whose reply times
 * out is sent again. redisson/redisson#4871
 * (scenarios/libraries/redisson_unlock_resent.toml).</li>
 * </ul>
 * In the nested modes an error of the re-entry or of the inner unlock, or a
 * re-entry refused (the lock is gone), ends the hold as a failed check does:
 * RELEASED at once, and every level still held is unlocked.
 */
public final class RedissonLockDriver {
    private static final List<String> MODES =
            List.of("watchdog", "lease", "watchdog-nocheck", "reentrant-threads", "reentrant-lease");

    private final Lab lab;
    private final RedissonClient redisson;
    private final boolean lease;
    private final boolean check;
    private final boolean nested;

    private RedissonLockDriver(Lab lab, RedissonClient redisson, String mode) {
        this.lab = lab;
        this.redisson = redisson;
        this.lease = mode.equals("lease") || mode.equals("reentrant-lease");
        this.check = mode.equals("watchdog") || mode.equals("lease");
        this.nested = mode.startsWith("reentrant-");
    }

    public static void main(String[] args) throws InterruptedException {
        String mode = args.length > 0 ? args[0] : "watchdog";
        if (!MODES.contains(mode)) {
            System.err.println("unknown mode " + mode + ": one of " + MODES);
            System.exit(2);
        }
        Lab lab = new Lab();
        RedissonClient redisson = Redissons.single(lab, mode.equals("reentrant-lease"));
        RedissonLockDriver driver = new RedissonLockDriver(lab, redisson, mode);
        // Redisson keeps the lock under the name it is given.
        lab.store.call("LOCKKEY", lab.resource, lab.resource);
        lab.warmUp(name -> {
            RLock warm = redisson.getLock(name);
            if (driver.lease ? warm.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS) : warm.tryLock(0, TimeUnit.MILLISECONDS)) {
                warm.isHeldByCurrentThread();
                warm.unlock();
            }
        });
        lab.ready();
        // reentrant-threads: two workers take the acquisitions in turn.
        ExecutorService[] workers = mode.equals("reentrant-threads")
                ? new ExecutorService[] {Executors.newSingleThreadExecutor(), Executors.newSingleThreadExecutor()}
                : null;
        Lab.sleep(lab.startMs);
        try {
            for (int n = 0; lab.running(); n++) {
                Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
                if (workers == null) {
                    driver.acquisition();
                } else {
                    workers[n % 2].submit(() -> {
                        driver.acquisition();
                        return null;
                    }).get();
                }
            }
        } catch (InterruptedException e) {
            // interrupted: stop
        } catch (ExecutionException e) {
            // What would have ended the loop in the main thread: the same exit
            // (the workers' threads would keep the JVM up).
            e.getCause().printStackTrace();
            System.exit(1);
        }
        redisson.shutdown(0, 0, TimeUnit.MILLISECONDS);
        System.exit(0);
    }

    /** One acquisition, in the calling thread (Redisson's lock is the thread's). */
    private void acquisition() throws InterruptedException {
        RLock lock = redisson.getLock(lab.resource);
        // A master that is gone: try again after thinking.
        boolean got = lab.poll(() -> lease
                ? lock.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS)
                : lock.tryLock(0, TimeUnit.MILLISECONDS));
        if (!got) {
            return;
        }
        long heldAt = lab.now();
        // With clients.fencing the store hands out the tokens and refuses stale ones.
        Long fence = lab.fencing ? Long.valueOf(lab.store.call("FENCE", lab.me, lab.resource)) : null;
        // The key's PEXPIRE counts from the script, which is no earlier than
        // the call (the last try's: a try that failed left nothing).
        long validity = lab.validity(lab.ttlMs, lab.lastTry);
        lab.held(validity);
        long hold = lab.hold(validity);
        // How many levels this thread holds (the nested modes re-enter once).
        int[] levels = {1};
        lab.writeOver(heldAt, hold, fence, new Lab.BeforeWrite() {
            @Override
            public boolean held(int k) {
                if (!check) {
                    return true; // the lease, or the watchdog, is trusted
                }
                if (!lock.isHeldByCurrentThread()) {
                    return false; // expired, or taken by another
                }
                if (!lease) {
                    // The watchdog may have renewed it: what it left, as Redisson says.
                    long asked = lab.now();
                    long left = lock.remainTimeToLive();
                    if (left <= 0) {
                        return false;
                    }
                    lab.observed(left, asked);
                }
                return true;
            }

            @Override
            public boolean wrote(int k) {
                if (nested && k == 0) {
                    // A method that takes the lock again: the holder only counts
                    // up. Counted before the call: one that fails may still
                    // have counted up on the master, and an unlock too many is
                    // refused (not this thread's) and passed over.
                    levels[0]++;
                    boolean again;
                    try {
                        again = lease
                                ? lock.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS)
                                : lock.tryLock(0, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                    return again; // false: the lock is gone
                } else if (nested && k == 1) {
                    // ... and returns: that level is released.
                    lock.unlock();
                    levels[0]--;
                }
                return true;
            }
        });
        for (; levels[0] > 0; levels[0]--) {
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // expired, taken by another (IllegalMonitorStateException), or the master is gone
            }
        }
    }
}
