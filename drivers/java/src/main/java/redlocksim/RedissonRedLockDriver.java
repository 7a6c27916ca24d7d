package redlocksim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@code RedissonRedLock} (a {@code RedissonMultiLock} that needs a
 * majority) over independent masters under redlock-sim lab: a driver, as a
 * user writes one.
 *
 * <pre>
 *     mvn -q -B -f drivers/java/pom.xml package      # Redisson 3.52.0
 *     redlock-sim lab scenarios/libraries/partitions-redlock.toml -- \
 *         java -cp drivers/java/target/redlock-drivers.jar redlocksim.RedissonRedLockDriver [lease|watchdog]
 * </pre>
 *
 * One Redisson client per master (REDLOCK_NODES, {@code useSingleServer()}),
 * one {@code RLock} on each under the resource's name, and a {@code
 * RedissonRedLock} over them. Once connected and warm (a first lock of
 * another name: see {@link Lab#warmUp}) it says READY and waits for the
 * reply, which starts the run's clock. It loops until REDLOCK_DURATION_MS has
 * passed: think, take the lock, HELD (the TTL counted from the call less the
 * drift allowance: Redisson computes no validity), REDLOCK_WRITES writes over
 * the hold, RELEASED at its end, unlock. RedissonRedLock is deprecated in
 * Redisson 3.x (its javadoc points to RLock, whose writes Redisson now
 * propagates to replicas) but is still shipped and works as Redlock: it
 * succeeds when a majority took the lock and unlocks all of them otherwise.
 *
 * The lab's nodes have no pub/sub, which a waiting {@code tryLock} uses; so the
 * driver polls with {@code tryLock(0, ...)} up to REDLOCK_RETRY_COUNT times.
 * Modes (the first argument): {@code lease} (the default): {@code tryLock(0,
 * ttl, MILLISECONDS)}; {@code watchdog}: {@code tryLock(0, -1, MILLISECONDS)},
 * each master's lock renewed by its client's watchdog. No check before the
 * writes: the multi-lock's {@code isHeldByCurrentThread()} asks every master
 * and needs all of them, so with one master down it says no although a
 * majority holds, and it has no {@code remainTimeToLive()}. So the driver
 * never learns that the lock is gone (RELEASED comes at the end of the hold),
 * nor sees the watchdogs' renewals (HELD once, at the acquisition).
 */
public final class RedissonRedLockDriver {
    public static void main(String[] args) {
        boolean lease = !(args.length > 0 && args[0].equals("watchdog"));
        Lab lab = new Lab();
        List<RedissonClient> clients = new ArrayList<>();
        for (String node : lab.nodes) {
            clients.add(Redissons.one(lab, node));
        }
        // Redisson keeps the lock under the name it is given, on each master,
        // each master's lock owned by its own client's id (<uuid>:<thread>):
        // the lab counts keys by the client that set them (BYCLIENT).
        lab.store.call("LOCKKEY", lab.resource, lab.resource, "BYCLIENT");
        lab.warmUp(name -> {
            RLock[] locks = clients.stream().map(c -> c.getLock(name)).toArray(RLock[]::new);
            RedissonRedLock warm = new RedissonRedLock(locks);
            if (warm.tryLock(0, lab.ttlMs, TimeUnit.MILLISECONDS)) {
                warm.unlock();
            }
        });
        lab.ready();
        Lab.sleep(lab.startMs);
        while (lab.running()) {
            Lab.sleep(Lab.draw("REDLOCK_THINK_MS"));
            RLock[] locks = clients.stream().map(c -> c.getLock(lab.resource)).toArray(RLock[]::new);
            RedissonRedLock lock = new RedissonRedLock(locks);
            boolean got;
            try {
                got = lab.poll(() -> lock.tryLock(0, lease ? lab.ttlMs : -1, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                break;
            }
            if (!got) {
                continue;
            }
            long heldAt = lab.now();
            Long fence = lab.fencing ? Long.valueOf(lab.store.call("FENCE", lab.me, lab.resource)) : null;
            long validity = lab.validity(lab.ttlMs, lab.lastTry);
            lab.held(validity);
            long hold = lab.hold(validity);
            lab.writeOver(heldAt, hold, fence, Lab.TRUST);
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                // expired on some master, or a master is gone
            }
        }
        for (RedissonClient c : clients) {
            c.shutdown(0, 0, TimeUnit.MILLISECONDS);
        }
        System.exit(0);
    }
}
