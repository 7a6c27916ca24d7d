package redlocksim;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

/**
 * What every Java driver reads from redlock-sim lab's environment (REDLOCK_*,
 * see docs/cli-and-outputs.md, `redlock-sim lab`), and the store: a tiny RESP
 * client over one socket, as a user in a hurry writes one, so that the store's
 * commands (LOCKKEY, READY, FENCE, WRITE, HELD, RELEASED) need none of the
 * libraries under test; and the part of the loop every driver shares (the
 * driver contract, docs/lab.md "Writing a driver"): READY once connected and
 * warm, then, for each acquisition, {@link #held HELD}, the writes over the
 * hold with the library's check before each write after the first, and
 * RELEASED the moment the library says the lock is gone, or at the end of
 * the hold ({@link #writeOver}).
 */
final class Lab {
    final String me = env("REDLOCK_CLIENT");
    final String resource = env("REDLOCK_RESOURCE");
    final long ttlMs = Long.parseLong(env("REDLOCK_TTL_MS"));
    final int writes = Integer.parseInt(env("REDLOCK_WRITES"));
    final long timeoutMs = Long.parseLong(env("REDLOCK_REQUEST_TIMEOUT_MS"));
    /** How long a lock call may wait: REDLOCK_RETRY_COUNT × REDLOCK_RETRY_DELAY_MS. */
    final long waitMs = Long.parseLong(env("REDLOCK_RETRY_COUNT")) * Long.parseLong(env("REDLOCK_RETRY_DELAY_MS"));
    final long retryDelayMs = Long.parseLong(env("REDLOCK_RETRY_DELAY_MS"));
    final long durationMs = Long.parseLong(env("REDLOCK_DURATION_MS"));
    final long startMs = Long.parseLong(env("REDLOCK_START_MS"));
    final boolean fencing = "1".equals(System.getenv("REDLOCK_FENCING"));
    final boolean renew = "1".equals(System.getenv("REDLOCK_RENEW"));
    /** `single`: the sentinel and the master's name; null in `redlock`. */
    final String sentinel = System.getenv("REDLOCK_SENTINEL");
    final String masterName = System.getenv("REDLOCK_MASTER_NAME");
    /** The masters, `host:port` each (in `single`, the nodes). */
    final String[] nodes = env("REDLOCK_NODES").split(",");
    final Store store = new Store(env("REDLOCK_STORE"));
    /** When the run's clock started: the reply to READY ({@link #ready});
     * until then, when the driver started. REDLOCK_START_MS and
     * REDLOCK_DURATION_MS count from it. */
    long started = System.nanoTime();
    /** Where the last HELD said the hold ends (ms, {@link #now()}). */
    long heldUntil;

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null) {
            throw new IllegalStateException(name + " is not set: run this under `redlock-sim lab`");
        }
        return v;
    }

    /** Milliseconds since the driver started, on the monotonic clock. */
    long now() {
        return (System.nanoTime() - started) / 1_000_000;
    }

    /** One lock and release on a name of its own. */
    interface Warm {
        void lockAndRelease(String name) throws Exception;
    }

    /**
     * A service takes its locks warm; a driver is a fresh JVM, whose first
     * lock call loads and compiles the library: measured in the library
     * matrix, that first call cost 300 to 600 ms, so a first validity
     * counted from the call was 376 to 683 ms of a 1 s TTL against 766 to
     * 978 ms for the Python, Node and Go drivers, and the failover race
     * mostly missed. So, before READY, the driver takes and releases a
     * lock of another name once ({@code <resource>:warmup:<client>}, a key
     * the lab does not follow); the run's clock starts at READY's reply,
     * after it ({@link #ready}). A failure (a master down) is passed over.
     */
    void warmUp(Warm w) {
        try {
            w.lockAndRelease(resource + ":warmup:" + me);
        } catch (Exception e) {
            // the master is gone or does not answer: the loop will find out
        }
    }

    /**
     * READY: the driver is connected and warm. The store answers every
     * client at once when the last one is ready, and the run's clock
     * (REDLOCK_START_MS, REDLOCK_DURATION_MS, the scenario's faults) starts
     * at that reply, so that a JVM's start moves nothing. A lab older than
     * READY answers it with an error ({@code unknown command}): passed over,
     * the clock then starts here.
     */
    void ready() {
        try {
            store.call("READY", me);
        } catch (Rejected e) {
            // a lab older than READY
        }
        started = System.nanoTime();
    }

    boolean running() {
        return now() < durationMs;
    }

    /** A draw from an `A..B` range of milliseconds (REDLOCK_THINK_MS, REDLOCK_HOLD_MS). */
    static long draw(String name) {
        String[] ab = env(name).split("\\.\\.");
        long lo = Long.parseLong(ab[0]);
        long hi = ab.length > 1 ? Long.parseLong(ab[1]) : lo;
        return hi > lo ? ThreadLocalRandom.current().nextLong(lo, hi + 1) : lo;
    }

    /** The hold: REDLOCK_HOLD_MS drawn, or the validity when it says `validity`. */
    long hold(long validityMs) {
        return "validity".equals(env("REDLOCK_HOLD_MS")) ? validityMs : draw("REDLOCK_HOLD_MS");
    }

    /** When, from the start of the hold, write k of REDLOCK_WRITES is due. */
    long writeAt(int k, long hold) {
        return writes > 1 ? hold * k / (writes - 1) : 0;
    }

    /** What is left of a lock taken at `calledAt` (ms, {@link #now()}) with `ttl`
     * for sure: the TTL counted from the call, less Redlock's allowance for
     * clock drift (1% + 2 ms). */
    long validity(long ttl, long calledAt) {
        return Math.max(0, ttl - (now() - calledAt) - drift(ttl));
    }

    /** The allowance for clock drift of a lock with `ttl`: 1% + 2 ms. */
    static long drift(long ttl) {
        return ttl / 100 + 2;
    }

    /** HELD: the library holds the lock for `validMs` more (at the
     * acquisition, or after a renewal: the lab records it as extended). */
    void held(long validMs) {
        heldUntil = now() + validMs;
        store.call("HELD", me, resource, validMs);
    }

    /** What a check saw left of the lock: the key's PTTL `left`, asked at
     * `asked` (ms, {@link #now()}). When that ends later than the last HELD
     * said, by more than the drift allowance (the few milliseconds the lock
     * call's own validity left out), the library renewed the lock since:
     * HELD again, with what the renewal left. */
    void observed(long left, long asked) {
        long valid = validity(left, asked);
        if (now() + valid > heldUntil + drift(ttlMs)) {
            held(valid);
        }
    }

    /** RELEASED: the client holds the lock no more, by the library's word
     * (a check, a failed renewal, an error taken for a loss) or at the end
     * of its hold; it writes no more in this acquisition. */
    void released() {
        store.call("RELEASED", me, resource);
    }

    /** What the driver does around the writes of a hold. */
    interface BeforeWrite {
        /** Before write k (k >= 1): the library's check, where it has one:
         * false, or an exception (the master does not answer: the driver
         * stops writing), when it says the lock is gone. A renewal it sees
         * is said with {@link #observed} (HELD again). */
        boolean held(int k);

        /** Right after write k (k >= 0): whatever else the holder does with
         * the lock there (nothing by default); false, or an exception, when
         * the library then says the lock is gone, as for {@link #held}. */
        default boolean wrote(int k) {
            return true;
        }
    }

    /** No check: the driver trusts the lock (its TTL, or the library's
     * watchdog) between the writes. */
    static final BeforeWrite TRUST = k -> true;

    /**
     * The hold of one acquisition, after its HELD: REDLOCK_WRITES writes
     * over `hold` from `heldAt` (ms, {@link #now()}), write k due at
     * {@link #writeAt}, `before` asked before each write after the first
     * (and told after each write). When it says the lock is gone (or
     * throws), RELEASED at once and no more writes; otherwise sleeps to the
     * end of the hold and says RELEASED. Either way the driver then unlocks
     * (errors ignored), thinks and loops. Answers whether the hold ran to its
     * end.
     */
    boolean writeOver(long heldAt, long hold, Long fence, BeforeWrite before) {
        for (int i = 0; i < writes; i++) {
            int k = i;
            sleepUntil(heldAt + writeAt(k, hold));
            if (k > 0 && !still(() -> before.held(k))) {
                return false;
            }
            store.write(me, resource, fence);
            if (!still(() -> before.wrote(k))) {
                return false;
            }
        }
        sleepUntil(heldAt + hold);
        released();
        return true;
    }

    /** Whether the library still holds the lock by `says`; RELEASED at once
     * when it does not, or fails (the master does not answer: it may be gone). */
    private boolean still(BooleanSupplier says) {
        boolean still;
        try {
            still = says.getAsBoolean();
        } catch (RuntimeException e) {
            still = false;
        }
        if (!still) {
            released();
        }
        return still;
    }

    /** One try of a lock call that does not wait. */
    interface Try {
        boolean once() throws InterruptedException;
    }

    /** Tries up to REDLOCK_RETRY_COUNT times, REDLOCK_RETRY_DELAY_MS apart
     * (drawn from [d/2, d]), as a user polls a lock that does not wait on its
     * own; an error of the master counts as a failed try. */
    boolean poll(Try t) throws InterruptedException {
        lastTry = now();
        long tries = Long.parseLong(env("REDLOCK_RETRY_COUNT"));
        for (long i = 0; i < Math.max(1, tries); i++) {
            if (i > 0) {
                sleep(ThreadLocalRandom.current().nextLong(retryDelayMs / 2, retryDelayMs + 1));
            }
            lastTry = now();
            try {
                if (t.once()) {
                    return true;
                }
            } catch (RuntimeException e) {
                // the master is gone or does not answer: try again
            }
        }
        return false;
    }

    /** When {@link #poll}'s last try began (ms, {@link #now()}): the lock's
     * TTL counts from no earlier than that. */
    long lastTry;

    /** Sleeps until `at` (ms, {@link #now()}). */
    void sleepUntil(long at) {
        sleep(at - now());
    }

    static void sleep(long ms) {
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String host(String addr) {
        return addr.substring(0, addr.lastIndexOf(':'));
    }

    static int port(String addr) {
        return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
    }

    /** The store, over RESP. */
    static final class Store {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;

        Store(String addr) {
            try {
                socket = new Socket();
                socket.setTcpNoDelay(true);
                socket.connect(new InetSocketAddress(host(addr), port(addr)));
                out = socket.getOutputStream();
                in = new BufferedInputStream(socket.getInputStream());
            } catch (IOException e) {
                throw new IllegalStateException("the store at " + addr + ": " + e, e);
            }
        }

        /** Sends one command; answers `+OK`'s text, an integer's, or throws
         * {@link Rejected} for an error answer (`-REJECTED ...`). */
        synchronized String call(Object... args) {
            StringBuilder b = new StringBuilder().append('*').append(args.length).append("\r\n");
            for (Object a : args) {
                byte[] s = String.valueOf(a).getBytes(StandardCharsets.UTF_8);
                b.append('$').append(s.length).append("\r\n").append(String.valueOf(a)).append("\r\n");
            }
            try {
                out.write(b.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
                return reply();
            } catch (IOException e) {
                throw new IllegalStateException("the store: " + e, e);
            }
        }

        private String reply() throws IOException {
            int type = in.read();
            String line = line();
            switch (type) {
                case '+':
                case ':':
                    return line;
                case '-':
                    throw new Rejected(line);
                case '$': {
                    int n = Integer.parseInt(line);
                    if (n < 0) {
                        return null;
                    }
                    byte[] s = in.readNBytes(n + 2);
                    return new String(s, 0, n, StandardCharsets.UTF_8);
                }
                default:
                    throw new IOException("unexpected reply from the store: " + (char) type + line);
            }
        }

        private String line() throws IOException {
            StringBuilder b = new StringBuilder();
            for (int c = in.read(); c != '\r'; c = in.read()) {
                if (c < 0) {
                    throw new IOException("the store closed the connection");
                }
                b.append((char) c);
            }
            in.read(); // '\n'
            return b.toString();
        }

        /** One write to the protected resource; a refused one (fencing: a
         * later holder's token came first) is not an error. */
        void write(String me, String resource, Long fence) {
            try {
                if (fence == null) {
                    call("WRITE", me, resource);
                } else {
                    call("WRITE", me, resource, fence);
                }
            } catch (Rejected e) {
                // REJECTED: a later holder's token came first
            }
        }
    }

    /** An error answer of the store. */
    static final class Rejected extends RuntimeException {
        Rejected(String message) {
            super(message, null, false, false);
        }
    }
}
