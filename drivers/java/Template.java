import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A template driver for {@code redlock-sim lab}: copy it to judge YOUR lock library.
 *
 * <pre>
 *     redlock-sim lab scenarios/gc_pause.toml -- java drivers/java/Template.java
 * </pre>
 *
 * It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY,
 * READY, the loop, FENCE, HELD (after the lock and after every renewal),
 * WRITE with a check before each write after the first, RELEASED the moment
 * the lock is lost. Its lock is a placeholder: the simplest correct lock on
 * one Redis ({@code SET key token NX PX ttl}, a compare-and-delete script), on
 * the first node of REDLOCK_NODES, or in {@code single} on the master the
 * sentinel names. Replace the five methods marked {@code YOUR LIBRARY} (and
 * KEY); the rest needs no change. It needs only the JDK (17 or later: a
 * single source file runs without a build): {@link Resp}, a tiny RESP client,
 * speaks to the store and to the placeholder's server. With a library such as
 * Redisson, build your client in {@code connect()} ({@code Redisson.create}
 * with {@code useSingleServer()} on the node, or {@code useSentinelServers()}
 * on REDLOCK_SENTINEL), and run it with the library's jars on the class path:
 * {@code java -cp 'lib/*' Template.java}.
 */
public final class Template {
    static final Map<String, String> ENV = System.getenv();
    static final String ME = ENV.get("REDLOCK_CLIENT"), RESOURCE = ENV.get("REDLOCK_RESOURCE");
    static final long TTL = num("REDLOCK_TTL_MS"), WRITES = num("REDLOCK_WRITES");
    static final int TIMEOUT = (int) num("REDLOCK_REQUEST_TIMEOUT_MS");
    static final boolean RENEW = "1".equals(ENV.get("REDLOCK_RENEW"));

    // ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: throw) ----
    static final String KEY = RESOURCE; // the key your library keeps the lock under (LOCKKEY below)
    static final String EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
    static final String UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
    static final Map<String, Resp> NODES = new HashMap<>();

    record Handle(Resp node, String token) {}

    static Resp connect() throws IOException { // YOUR LIBRARY: connect (the master, asked of the sentinel in `single`)
        String addr = ENV.get("REDLOCK_NODES").split(",")[0];
        if (ENV.containsKey("REDLOCK_SENTINEL")) {
            List<?> master = (List<?>) NODES.computeIfAbsent(ENV.get("REDLOCK_SENTINEL"), a -> new Resp(a, TIMEOUT))
                    .call("SENTINEL", "get-master-addr-by-name", ENV.get("REDLOCK_MASTER_NAME"));
            addr = master.get(0) + ":" + master.get(1); // a null reply (no master): an exception
        }
        return NODES.computeIfAbsent(addr, a -> new Resp(a, TIMEOUT)); // it reconnects after an error
    }

    static Handle lock() throws IOException { // YOUR LIBRARY: lock (one try): a handle, or null when taken
        Handle h = new Handle(connect(), UUID.randomUUID().toString());
        return "OK".equals(h.node.call("SET", KEY, h.token, "NX", "PX", TTL)) ? h : null;
    }

    static boolean check(Handle h) throws IOException { // YOUR LIBRARY: check: does it still hold the lock?
        return h.token.equals(h.node.call("GET", KEY));
    }

    static boolean extend(Handle h) throws IOException { // YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): false when lost
        return Long.valueOf(1).equals(h.node.call("EVAL", EXTEND, 1, KEY, h.token, TTL));
    }

    static void unlock(Handle h) throws IOException { // YOUR LIBRARY: unlock
        h.node.call("EVAL", UNLOCK, 1, KEY, h.token);
    }

    // ---- The protocol: nothing to change below. ----
    static final Resp STORE = new Resp(ENV.get("REDLOCK_STORE"), 0); // no timeout: READY waits for every client

    public static void main(String[] args) throws IOException {
        STORE.call("LOCKKEY", RESOURCE, KEY);
        // A warm-up: a JVM's first calls load classes (100 ms, of a 1 s TTL),
        // so once before READY: connect, make a token, check (a GET).
        ask(() -> check(new Handle(connect(), UUID.randomUUID().toString())));
        try {
            STORE.call("READY", ME); // the run's clock starts at the reply
        } catch (Resp.ErrorReply e) {
            // a lab older than READY
        }
        long start = now();
        sleep(num("REDLOCK_START_MS"));
        while (now() - start < num("REDLOCK_DURATION_MS")) {
            sleep(draw("REDLOCK_THINK_MS"));
            Handle h = null;
            long[] calledAt = {0}; // the lock call's, then the last renewal's
            for (int attempt = 0; attempt < Math.max(1, num("REDLOCK_RETRY_COUNT")) && h == null; attempt++) {
                sleep(attempt > 0 ? num("REDLOCK_RETRY_DELAY_MS") : 0);
                calledAt[0] = now(); // the key's TTL counts from no earlier
                try {
                    h = lock();
                } catch (IOException | RuntimeException e) {
                    // the server is gone: a failed try
                }
            }
            if (h == null) {
                continue;
            }
            Handle held = h;
            long heldAt = now();
            List<Object> write = new ArrayList<>(List.of("WRITE", ME, RESOURCE));
            if ("1".equals(ENV.get("REDLOCK_FENCING"))) {
                write.add(STORE.call("FENCE", ME, RESOURCE));
            }
            long valid = validity(calledAt[0]);
            STORE.call("HELD", ME, RESOURCE, valid);
            long hold = "validity".equals(ENV.get("REDLOCK_HOLD_MS")) ? valid : draw("REDLOCK_HOLD_MS");
            boolean lost = false;
            for (int k = 0; k < WRITES && !lost; k++) {
                // A failed renewal, or the check says it is gone (or fails): lost.
                lost = !holding(held, calledAt, heldAt + (WRITES > 1 ? hold * k / (WRITES - 1) : 0))
                        || k > 0 && !ask(() -> check(held));
                if (!lost) {
                    try {
                        STORE.call(write.toArray());
                    } catch (Resp.ErrorReply e) {
                        // REJECTED: a later holder's fence came first
                    }
                }
            }
            if (!lost) {
                holding(held, calledAt, heldAt + hold);
            }
            STORE.call("RELEASED", ME, RESOURCE); // at once when lost
            ask(() -> { unlock(held); return true; }); // an error: expired, or the server is gone
        }
        System.exit(0);
    }

    /** Sleeps until {@code until}, renewing every ttl/3 with REDLOCK_RENEW=1 (HELD
     * after each); false when a renewal failed (lost). */
    static boolean holding(Handle h, long[] calledAt, long until) throws IOException {
        for (long now; (now = now()) < until; ) {
            long due = RENEW ? calledAt[0] + TTL / 3 : until;
            if (due <= now) {
                calledAt[0] = now();
                if (!ask(() -> extend(h))) {
                    return false;
                }
                STORE.call("HELD", ME, RESOURCE, validity(calledAt[0]));
            }
            sleep(Math.min(due, until) - now());
        }
        return true;
    }

    interface Call {
        boolean call() throws IOException;
    }

    /** The library's answer; false when it throws. */
    static boolean ask(Call c) {
        try {
            return c.call();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** What is left for sure: the TTL counted from the call, less 1% + 2 ms. */
    static long validity(long calledAt) {
        return Math.max(0, TTL - (now() - calledAt) - (TTL / 100 + 2));
    }

    static long now() {
        return System.nanoTime() / 1_000_000;
    }

    static long num(String name) {
        return Long.parseLong(ENV.get(name));
    }

    /** Milliseconds, drawn from REDLOCK_X_MS = "A..B" (or "A"). */
    static long draw(String name) {
        String[] ab = ENV.get(name).split("\\.\\.");
        long lo = Long.parseLong(ab[0]), hi = Long.parseLong(ab[ab.length - 1]);
        return hi > lo ? ThreadLocalRandom.current().nextLong(lo, hi + 1) : lo;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A tiny RESP client over one socket: (re)connects at a call, and
     * closes after an I/O error or a timeout, so the next call connects again. */
    static final class Resp {
        final String host;
        final int port, timeout; // ms; 0: none
        Socket socket;
        InputStream in;
        OutputStream out;

        Resp(String addr, int timeout) {
            int i = addr.lastIndexOf(':');
            this.host = addr.substring(0, i);
            this.port = Integer.parseInt(addr.substring(i + 1));
            this.timeout = timeout;
        }

        /** An error reply ({@code -ERR ...}, {@code -REJECTED ...}). */
        static final class ErrorReply extends RuntimeException {
            ErrorReply(String message) {
                super(message);
            }
        }

        /** Sends one command: a String, a Long, a List, null; or ErrorReply. */
        synchronized Object call(Object... args) throws IOException {
            try {
                if (socket == null) {
                    socket = new Socket();
                    socket.connect(new InetSocketAddress(host, port), timeout);
                    socket.setSoTimeout(timeout);
                    socket.setTcpNoDelay(true);
                    in = new BufferedInputStream(socket.getInputStream());
                    out = new BufferedOutputStream(socket.getOutputStream());
                }
                out.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                for (Object a : args) {
                    byte[] b = String.valueOf(a).getBytes(StandardCharsets.UTF_8);
                    out.write(("$" + b.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                    out.write(b);
                    out.write("\r\n".getBytes(StandardCharsets.UTF_8));
                }
                out.flush();
                return reply();
            } catch (IOException e) {
                if (socket != null) {
                    socket.close();
                }
                socket = null;
                throw e;
            }
        }

        private Object reply() throws IOException {
            int type = in.read();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != '\r'; c = in.read()) {
                if (c < 0) {
                    throw new IOException("the connection closed");
                }
                line.append((char) c);
            }
            in.read(); // '\n'
            String s = line.toString();
            switch (type) {
                case '+': return s;
                case '-': throw new ErrorReply(s);
                case ':': return Long.valueOf(s);
                case '$': {
                    int n = Integer.parseInt(s);
                    return n < 0 ? null : new String(in.readNBytes(n + 2), 0, n, StandardCharsets.UTF_8);
                }
                case '*': {
                    List<Object> items = new ArrayList<>();
                    for (int i = Integer.parseInt(s); i > 0; i--) {
                        items.add(reply());
                    }
                    return items;
                }
                default: throw new IOException("not a RESP reply: " + (char) type + s);
            }
        }
    }
}
