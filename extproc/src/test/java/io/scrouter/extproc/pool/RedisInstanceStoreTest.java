package io.scrouter.extproc.pool;

import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The instance store against a real {@code redis-server}: the schema, expiry and the validation gate. */
class RedisInstanceStoreTest {

    private static final String PREFIX = "ist";
    private static final Duration LONG = Duration.ofMinutes(5);
    /** One call of the test's client: Redisson's default call timeout (3 s), with room. */
    private static final Duration STORE_CALL = Patience.of(Duration.ofSeconds(3));

    private static RedisProcess redis;
    private static RedissonClient client;

    private RedisInstanceStore store;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        client = Redisson.create(c);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        client.shutdown();
        redis.close();
    }

    @BeforeEach
    void clean() throws Exception {
        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");
        store = new RedisInstanceStore(client, new RedisKeys(PREFIX));
    }

    private List<Replica> list() throws Exception {
        return store.list().get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void emptyStoreListsNothing() throws Exception {
        assertThat(list()).isEmpty();
    }

    @Test
    void publishedReplicasRoundTrip() throws Exception {
        Replica a = new Replica("spark-0", "10.0.0.5:15002", "http://10.0.0.5:4040", ReplicaState.READY);
        Replica b = new Replica("spark-1", "[fd00::6]:15002", null, ReplicaState.WARMING);
        Replica c = new Replica("spark-2", "10.0.0.7:15002", "https://10.0.0.7:4040", ReplicaState.DRAINING);

        store.publish(a, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        store.publish(b, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        store.publish(c, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(list()).containsExactlyInAnyOrder(a, b, c);
    }

    @Test
    void publishWritesTheDocumentedSchema() throws Exception {
        store.publish(new Replica("spark-0", "10.0.0.5:15002", null, ReplicaState.READY), Duration.ofSeconds(60))
                .get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(redis.command("SISMEMBER", PREFIX + ":replicas", "spark-0")).isEqualTo(":1");
        String json = redis.command("GET", PREFIX + ":replica:spark-0");
        assertThat(json).contains("\"grpc\":\"10.0.0.5:15002\"").contains("\"state\":\"ready\"");
        long pttl = Long.parseLong(redis.command("PTTL", PREFIX + ":replica:spark-0").substring(1));
        assertThat(pttl).isPositive().isLessThanOrEqualTo(60_000);
    }

    @Test
    void republishingRenewsAndUpdatesTheEntry() throws Exception {
        store.publish(new Replica("spark-0", "10.0.0.5:15002", null, ReplicaState.WARMING), Duration.ofSeconds(2))
                .get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        Replica ready = new Replica("spark-0", "10.0.0.5:15002", null, ReplicaState.READY);

        store.publish(ready, Duration.ofSeconds(60)).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(list()).containsExactly(ready);
        long pttl = Long.parseLong(redis.command("PTTL", PREFIX + ":replica:spark-0").substring(1));
        assertThat(pttl).isGreaterThan(2_000);
    }

    @Test
    void unrenewedReplicaExpiresAndIsPrunedFromTheIndex() throws Exception {
        Replica stays = new Replica("stays", "10.0.0.5:15002", null, ReplicaState.READY);
        Replica goes = new Replica("goes", "10.0.0.6:15002", null, ReplicaState.READY);
        store.publish(stays, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        Duration lifetime = Duration.ofMillis(300);
        store.publish(goes, lifetime).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(list()).contains(goes);

        Await.until("the unrenewed replica to drop out of list()", Patience.of(lifetime),
                () -> !store.list().join().contains(goes));

        assertThat(list()).containsExactly(stays);
        // list() prunes the index in the background; it must get there.
        Await.untilChecked("the index to forget the expired replica", STORE_CALL,
                () -> redis.command("SISMEMBER", PREFIX + ":replicas", "goes").equals(":0"));
        assertThat(redis.command("SISMEMBER", PREFIX + ":replicas", "stays")).isEqualTo(":1");
    }

    @Test
    void invalidEntriesAreSkippedNotRouted() throws Exception {
        Replica good = new Replica("good", "10.0.0.5:15002", null, ReplicaState.READY);
        store.publish(good, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        // Written by hand, as a buggy controller might: none of these may reach the pool.
        writeRaw("hostname", "{\"id\":\"hostname\",\"grpc\":\"spark-0:15002\",\"state\":\"ready\"}");
        writeRaw("badstate", "{\"id\":\"badstate\",\"grpc\":\"10.0.0.8:15002\",\"state\":\"starting\"}");
        writeRaw("nostate", "{\"id\":\"nostate\",\"grpc\":\"10.0.0.8:15002\"}");
        writeRaw("nogrpc", "{\"id\":\"nogrpc\",\"state\":\"ready\"}");
        writeRaw("notjson", "10.0.0.8:15002");
        writeRaw("crlf", "{\"id\":\"crlf\",\"grpc\":\"10.0.0.8:15002\\r\\nx: y\",\"state\":\"ready\"}");
        writeRaw("bad id!", "{\"grpc\":\"10.0.0.8:15002\",\"state\":\"ready\"}");

        assertThat(list()).containsExactly(good);
        // Asking again (the second report is not logged) gives the same answer.
        assertThat(list()).containsExactly(good);
    }

    @Test
    void fixedEntryIsPickedUpAgain() throws Exception {
        writeRaw("spark-0", "{\"grpc\":\"spark-0:15002\",\"state\":\"ready\"}");
        assertThat(list()).isEmpty();

        Replica fixed = new Replica("spark-0", "10.0.0.5:15002", null, ReplicaState.READY);
        store.publish(fixed, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(list()).containsExactly(fixed);
    }

    @Test
    void removeDeletesEntryAndIndexAtOnce() throws Exception {
        Replica a = new Replica("a", "10.0.0.5:15002", null, ReplicaState.READY);
        Replica b = new Replica("b", "10.0.0.6:15002", null, ReplicaState.READY);
        store.publish(a, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
        store.publish(b, LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        store.remove("a").get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(list()).containsExactly(b);
        assertThat(redis.command("EXISTS", PREFIX + ":replica:a")).isEqualTo(":0");
        assertThat(redis.command("SISMEMBER", PREFIX + ":replicas", "a")).isEqualTo(":0");
    }

    @Test
    void prefixesKeepDeploymentsApart() throws Exception {
        RedisInstanceStore other = new RedisInstanceStore(client, new RedisKeys("other"));
        other.publish(new Replica("a", "10.0.0.5:15002", null, ReplicaState.READY), LONG).get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(list()).isEmpty();
    }

    private void writeRaw(String id, String json) throws Exception {
        assertThat(redis.command("SET", PREFIX + ":replica:" + id, json)).isEqualTo("+OK");
        redis.command("SADD", PREFIX + ":replicas", id);
    }
}
