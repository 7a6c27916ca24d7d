package redlocksim;

import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * ShedLock's Redis provider (shedlock-provider-redis-spring's {@code
 * RedisLockProvider}, on Spring Data Redis and Lettuce) under redlock-sim lab:
 * a driver, as a user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # ShedLock 7.10.1
 *     redlock-sim lab scenarios/libraries/release_after_pause.toml -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.ShedLockDriver [default|safe]
 * </pre>
 *
 * ShedLock locks scheduled jobs: {@code LockProvider.lock(LockConfiguration)}
 * tries once ({@code SET key value NX PX lockAtMostFor}, the value
 * "ADDED:&lt;time&gt;@&lt;host&gt;:&lt;uuid&gt;") and answers a {@code SimpleLock} or
 * nothing; it does not wait. So the driver tries up to REDLOCK_RETRY_COUNT
 * times, REDLOCK_RETRY_DELAY_MS apart. lockAtMostFor is the TTL,
 * lockAtLeastFor zero. The key is {@code job-lock:<environment>:<name>}
 * ({@code job-lock:default:<resource>}). HELD with what is left of
 * lockAtMostFor counted from the configuration's creation (ShedLock sets the
 * key's PX to that) less the drift allowance; before each write after the
 * first, a check that this has not run out on the driver's own clock (a
 * {@code SimpleLock} has no "still held" to ask): after a pause, RELEASED at
 * once, no more writes, {@code unlock()}; otherwise RELEASED and {@code
 * unlock()} at the end of the hold. The driver never calls {@code extend()}
 * (so it never says HELD again). Once connected and warm (a first lock of
 * another name: see {@link Lab#warmUp}) it says READY and waits for the
 * reply, which starts the run's clock.
 *
 * Modes (the first argument), the provider's {@code safeUpdate} (ShedLock
 * 6.7.0, lukas-krecan/ShedLock#2583, PR #2584), in {@code RedisLockProvider.Builder}
 * (the Jedis and Lettuce providers take it as a constructor argument):
 * <ul>
 * <li>{@code default} ({@code safeUpdate(false)}): {@code unlock()} is a plain
 * DEL of the key, whoever holds it now; {@code extend()} is {@code SET key
 * value XX PX} (it overwrites another holder's value and succeeds).</li>
 * <li>{@code safe} ({@code safeUpdate(true)}): unlock deletes and extend
 * PEXPIREs only if the key still holds this lock's value (Lua compare-and-delete,
 * compare-and-pexpire), so a holder past its lockAtMostFor leaves the next
 * holder's lock alone.</li>
 * </ul>
 */
public final class ShedLockDriver {
    public static void main(String[] args) throws Exception {
        boolean safe = args.length > 0 && args[0].equals("safe");
        Lab lab = new Lab();
        LettuceConnectionFactory factory = SpringRedis.factory(lab);
        RedisLockProvider provider = new RedisLockProvider.Builder(factory).safeUpdate(safe).build();
        // ShedLock keeps the lock under "job-lock:<environment>:<name>".
        lab.store.call("LOCKKEY", lab.resource, "job-lock:default:" + lab.resource);
        lab.warmUp(name -> provider.lock(new LockConfiguration(
                        ClockProvider.now(), name, Duration.ofMillis(lab.ttlMs), Duration.ZERO))
                .ifPresent(SimpleLock::unlock));
        lab.ready();
        Lab.sleep(lab.startMs);
        while (lab.running()) {
            Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
            // ShedLock counts lockAtMostFor from the configuration's creation.
            LockConfiguration[] config = {null};
            long[] createdAt = {0};
            @SuppressWarnings("unchecked")
            Optional<SimpleLock>[] got = new Optional[] {Optional.empty()};
            try {
                lab.poll(() -> {
                    createdAt[0] = lab.now();
                    config[0] = new LockConfiguration(
                            ClockProvider.now(), lab.resource, Duration.ofMillis(lab.ttlMs), Duration.ZERO);
                    got[0] = provider.lock(config[0]);
                    return got[0].isPresent();
                });
            } catch (InterruptedException e) {
                break;
            }
            if (got[0].isEmpty()) {
                continue;
            }
            SimpleLock lock = got[0].get();
            long heldAt = lab.now();
            // With clients.fencing the store hands out the tokens and refuses stale ones.
            Long fence = lab.fencing ? Long.valueOf(lab.store.call("FENCE", lab.me, lab.resource)) : null;
            long validity = lab.validity(lab.ttlMs, createdAt[0]);
            lab.held(validity);
            long validUntil = lab.heldUntil;
            long hold = lab.hold(validity);
            // Its own clock is all it has to ask: past the TTL (a pause), the
            // lock is gone.
            lab.writeOver(heldAt, hold, fence, k -> lab.now() < validUntil);
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // the master is gone (LockException)
            }
        }
        System.exit(0);
    }
}
