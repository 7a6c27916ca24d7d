package redlocksim;

import java.util.concurrent.TimeUnit;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RFencedLock} under redlock-sim lab: a driver, as a user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # Redisson 3.52.0
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml --set clients.fencing=true -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.RedissonFencedLockDriver [lease|watchdog]
 * </pre>
 *
 * As {@link RedissonLockDriver} (the master through the sentinel in `single`,
 * polling with {@code tryLockAndGetToken(0, ...)}: the lab's nodes have no
 * pub/sub), with Redisson's fenced lock: each acquisition also increments a
 * counter on the master (the key {@code {<name>}:token}) and returns it, a
 * token that grows with every acquisition. With REDLOCK_FENCING=1 the driver
 * sends that token with its writes ({@code WRITE <client> <resource> <token>}),
 * instead of asking the store for one (FENCE): the store refuses a write whose
 * token is lower than the highest it accepted. The token is only as good as
 * the master's counter: a failover to a replica that missed increments hands
 * out tokens again.
 *
 * Once connected and warm (a first lock of another name: see {@link
 * Lab#warmUp}) it says READY and waits for the reply, which starts the run's
 * clock. Modes (the first argument): {@code lease} (the default):
 * {@code tryLockAndGetToken(0, ttl, MILLISECONDS)}; {@code watchdog}:
 * {@code tryLockAndGetToken(0, MILLISECONDS)}, renewed by Redisson's watchdog.
 * HELD with the TTL counted from the call less the drift allowance. Before
 * each write after the first, {@code isHeldByCurrentThread()} (and, with the
 * watchdog, {@code remainTimeToLive()}): when it says no (the PTTL 0 or less)
 * or fails (the master does not answer), RELEASED at once, no more writes,
 * unlock (errors ignored), think, loop; with the watchdog, when the PTTL ends
 * later than the last HELD said (the watchdog renewed the lock since), HELD
 * again with what it leaves, less the drift allowance.
 */
public final class RedissonFencedLockDriver {
    public static void main(String[] args) {
        boolean lease = !(args.length > 0 && args[0].equals("watchdog"));
        Lab lab = new Lab();
        RedissonClient redisson = Redissons.single(lab);
        // Redisson keeps the lock under the name it is given (its token counter
        // beside it, under "{<name>}:token").
        lab.store.call("LOCKKEY", lab.resource, lab.resource);
        lab.warmUp(name -> {
            RFencedLock warm = redisson.getFencedLock(name);
            if (warm.tryLockAndGetToken(0, lab.ttlMs, TimeUnit.MILLISECONDS) != null) {
                warm.isHeldByCurrentThread();
                warm.unlock();
            }
        });
        lab.ready();
        Lab.sleep(lab.startMs);
        while (lab.running()) {
            Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
            RFencedLock lock = redisson.getFencedLock(lab.resource);
            Long[] token = {null};
            boolean got;
            try {
                // A master that is gone: try again after thinking.
                got = lab.poll(() -> {
                    token[0] = lease
                            ? lock.tryLockAndGetToken(0, lab.ttlMs, TimeUnit.MILLISECONDS)
                            : lock.tryLockAndGetToken(0, TimeUnit.MILLISECONDS);
                    return token[0] != null;
                });
            } catch (InterruptedException e) {
                break;
            }
            if (!got) {
                continue;
            }
            long heldAt = lab.now();
            // With clients.fencing, Redisson's token is the fence.
            Long fence = lab.fencing ? token[0] : null;
            long validity = lab.validity(lab.ttlMs, lab.lastTry);
            lab.held(validity);
            long hold = lab.hold(validity);
            lab.writeOver(heldAt, hold, fence, k -> {
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
            });
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // expired, taken by another, or the master is gone
            }
        }
        redisson.shutdown(0, 0, TimeUnit.MILLISECONDS);
        System.exit(0);
    }
}
