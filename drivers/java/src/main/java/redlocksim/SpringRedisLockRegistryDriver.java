package redlocksim;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * Spring Integration's {@code RedisLockRegistry} under redlock-sim lab: a
 * driver, as a user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # spring-integration-redis 6.5.5
 *     redlock-sim lab scenarios/libraries/failover_race-single.toml -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.SpringRedisLockRegistryDriver
 * </pre>
 *
 * The lab starts one copy per client, with the scenario in its environment
 * (REDLOCK_*). Once connected and warm (a first lock of another name: see
 * {@link Lab#warmUp}) it says READY and waits for the reply, which starts the
 * run's clock. It loops until REDLOCK_DURATION_MS has passed: think, {@code
 * obtain(resource).tryLock(wait, MILLISECONDS)} (wait: REDLOCK_RETRY_COUNT ×
 * REDLOCK_RETRY_DELAY_MS; the registry retries every 100 ms), tell the store
 * it holds it (HELD, for the TTL counted from the call less Redlock's drift
 * allowance: the registry computes no validity), write to the store
 * REDLOCK_WRITES times over the hold, tell the store it let go (RELEASED),
 * {@code unlock()}. The registry's {@code expireAfter} is the TTL; it keeps
 * the lock under {@code <registryKey>:<lockKey>} (here {@code
 * redlock-sim:<resource>}), a string holding the registry's client id (one
 * UUID per registry, so per process), set by a Lua script (GET, then SET PX
 * if absent or PEXPIRE if its own). The registry's lock is a plain {@code
 * java.util.concurrent.locks.Lock}, with no "still held" a user can ask, so
 * before each write after the first the driver checks that the TTL has not
 * run out on its own clock (a pause); when it has, it says RELEASED at once,
 * writes no more and unlocks. It makes no extension (the registry's lock
 * runs to its TTL: the driver never says HELD again). The connection (Spring
 * Data Redis on Lettuce, through the sentinel in `single`) is {@link
 * SpringRedis}'s.
 *
 * {@code unlock()} differs between versions: 5.1.1 deletes the key whatever
 * it holds (so a holder that was paused past its expiry deletes the next
 * holder's lock); 5.1.2 first GETs it and throws IllegalStateException
 * instead when the value is not its own (spring-projects/spring-integration#2661);
 * 6.x deletes it by a compare-and-delete script. The same source builds
 * against both (see pom.xml, profile spring-integration-5.1).
 */
public final class SpringRedisLockRegistryDriver {
    public static void main(String[] args) throws Exception {
        Lab lab = new Lab();
        LettuceConnectionFactory factory = SpringRedis.factory(lab);
        RedisLockRegistry registry = new RedisLockRegistry(factory, "redlock-sim", lab.ttlMs);
        // The registry keeps the lock under "<registryKey>:<lockKey>".
        lab.store.call("LOCKKEY", lab.resource, "redlock-sim:" + lab.resource);
        lab.warmUp(name -> {
            Lock warm = registry.obtain(name);
            if (warm.tryLock(lab.waitMs, TimeUnit.MILLISECONDS)) {
                warm.unlock();
            }
        });
        lab.ready();
        Lab.sleep(lab.startMs);
        while (lab.running()) {
            Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
            Lock lock = registry.obtain(lab.resource);
            // The key's PX counts from its SET, which is no earlier than the call.
            long calledAt = lab.now();
            boolean got;
            try {
                got = lock.tryLock(lab.waitMs, TimeUnit.MILLISECONDS);
            } catch (RuntimeException e) {
                got = false; // the master is gone: try again after thinking
            }
            if (!got) {
                continue;
            }
            long heldAt = lab.now();
            // With clients.fencing the store hands out the tokens and refuses stale ones.
            Long fence = lab.fencing ? Long.valueOf(lab.store.call("FENCE", lab.me, lab.resource)) : null;
            long validity = lab.validity(lab.ttlMs, calledAt);
            lab.held(validity);
            long validUntil = lab.heldUntil;
            long hold = lab.hold(validity);
            // Its own clock is all it has to ask: past the TTL (a pause), the
            // lock is gone.
            lab.writeOver(heldAt, hold, fence, k -> lab.now() < validUntil);
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // expired ("Lock was released in the store due to expiration"),
                // or the master is gone
            }
        }
        System.exit(0);
    }
}
