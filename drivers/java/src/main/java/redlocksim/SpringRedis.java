package redlocksim;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import java.time.Duration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Spring Data Redis connection factory on Lettuce, as a Spring user sets one
 * up: through the sentinel in `single` ({@code RedisSentinelConfiguration}
 * with REDLOCK_SENTINEL and REDLOCK_MASTER_NAME), else on the first node;
 * connects and commands time out after REDLOCK_REQUEST_TIMEOUT_MS, and while
 * the connection is down commands fail at once rather than queue (a lock must
 * not wait on a master that is gone). The same source builds against Spring
 * Data Redis 2.1 (Spring Integration 5.1) and 3.5.
 */
final class SpringRedis {
    private SpringRedis() {}

    static LettuceConnectionFactory factory(Lab lab) {
        Duration timeout = Duration.ofMillis(lab.timeoutMs);
        LettuceClientConfiguration client = LettuceClientConfiguration.builder()
                .commandTimeout(timeout)
                .clientOptions(ClientOptions.builder()
                        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .build())
                .build();
        LettuceConnectionFactory factory;
        if (lab.sentinel != null) {
            RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration()
                    .master(lab.masterName)
                    .sentinel(Lab.host(lab.sentinel), Lab.port(lab.sentinel));
            factory = new LettuceConnectionFactory(sentinel, client);
        } else {
            String node = lab.nodes[0];
            factory = new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration(Lab.host(node), Lab.port(node)), client);
        }
        factory.afterPropertiesSet();
        return factory;
    }
}
