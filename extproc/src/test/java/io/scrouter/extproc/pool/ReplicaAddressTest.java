package io.scrouter.extproc.pool;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Whatever passes {@link ReplicaAddress} may be written into the route header that Envoy's ORIGINAL_DST
 * cluster connects to, without DNS. So only literal ip:port values may pass, and nothing that could smuggle
 * extra bytes into a header.
 */
class ReplicaAddressTest {

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.5:15002", "127.0.0.1:1", "255.255.255.255:65535", "[::1]:15002",
            "[fd00::5]:80"})
    void literalAddressesAreAcceptedUnchanged(String address) {
        assertThat(ReplicaAddress.parse(address)).contains(address);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "spark-0:15002",                        // hostname: ORIGINAL_DST does no DNS
            "localhost:15002",
            "spark-0.spark.svc.cluster.local:15002",
            "10.0.0.5",                             // no port
            "10.0.0.5:",                            // empty port
            ":15002",                               // no host
            "10.0.0.5:0",                           // port 0 cannot be connected to
            "10.0.0.5:65536",
            "10.0.0.5:-1",
            "10.0.0.5:+80",
            "10.0.0.5:80a",
            "256.1.1.1:1",
            "10.0.0:80",                            // three octets
            "10.0.0.5.6:80",
            "[:::::]:80",                           // malformed IPv6 that passed the character check
            "[1:2:3:4:5:6:7:8:9]:80",
            "[fffff::1]:80",
            "010.0.0.5:80",                         // leading zero: some parsers read octal
            "1.2.3.4:80\r\n",                       // header injection
            "1.2.3.4:80\n",
            " 1.2.3.4:80",
            "1.2.3.4 :80",
            "10.0.0.5:80/admin",                    // path
            "10.0.0.5/x:80",
            "http://10.0.0.5:80",
            "user@10.0.0.5:80",
            "::1:15002",                            // IPv6 without brackets
            "[::1]",                                // IPv6 without port
            "[]:80",
            "[10.0.0.5]:80",                        // brackets around IPv4
            "[fe80::1%eth0]:80",                    // zone id
            "[fd00::g]:80",
            "１０.0.0.5:80",                         // fullwidth digits
            "10.0.0.5:１５００２",
            "10.0.0.5:015002",                      // six port digits
    })
    void nonLiteralOrMalformedAddressesAreRejected(String address) {
        assertThat(ReplicaAddress.parse(address)).isEmpty();
    }

    @ParameterizedTest
    @NullAndEmptySource
    void nullAndEmptyAreRejected(String address) {
        assertThat(ReplicaAddress.parse(address)).isEmpty();
    }

    @Test
    void overLongInputIsRejectedWithoutScanningIt() {
        assertThat(ReplicaAddress.parse("1".repeat(65))).isEmpty();
        assertThat(ReplicaAddress.parse("[" + "0:".repeat(40) + "1]:80")).isEmpty();
        assertThat(ReplicaAddress.parse("9".repeat(1_000_000) + ":80")).isEmpty();
    }

    @Test
    void portWithLeadingZerosIsCanonicalised() {
        // Up to five port digits are read as a decimal number, so the stored form is the canonical one and
        // two spellings of one endpoint compare equal in the pool.
        assertThat(ReplicaAddress.parse("10.0.0.5:0080")).contains("10.0.0.5:80");
        assertThat(ReplicaAddress.parse("10.0.0.5:00001")).contains("10.0.0.5:1");
        assertThat(ReplicaAddress.parse("[::1]:08080")).contains("[::1]:8080");
    }

    @Test
    void replicaIdsAreNamesSafeForKeysAndTombstones() {
        assertThat(ReplicaAddress.isValidId("spark-0")).isTrue();
        assertThat(ReplicaAddress.isValidId("A.b_c-9")).isTrue();
        assertThat(ReplicaAddress.isValidId("x".repeat(64))).isTrue();

        assertThat(ReplicaAddress.isValidId(null)).isFalse();
        assertThat(ReplicaAddress.isValidId("")).isFalse();
        assertThat(ReplicaAddress.isValidId("x".repeat(65))).isFalse();
        assertThat(ReplicaAddress.isValidId("spark 0")).isFalse();
        // '!' marks a lost-session tombstone in the session store; ':' separates Redis key parts.
        assertThat(ReplicaAddress.isValidId("!lost")).isFalse();
        assertThat(ReplicaAddress.isValidId("a:b")).isFalse();
        assertThat(ReplicaAddress.isValidId("spark-0\n")).isFalse();
        assertThat(ReplicaAddress.isValidId("spärk")).isFalse();
    }

    @Test
    void replicaRecordCanonicalisesItsAddress() {
        Replica r = new Replica("spark-0", "10.0.0.5:0080", null, ReplicaState.READY);

        assertThat(r.grpcAddress()).isEqualTo("10.0.0.5:80");
        assertThat(r).isEqualTo(new Replica("spark-0", "10.0.0.5:80", null, ReplicaState.READY));
    }

    @Test
    void replicaRecordRejectsBadIdWithTheRuleAndTheValue() {
        assertThatThrownBy(() -> new Replica("spark 0", "10.0.0.5:15002", null, ReplicaState.READY))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(ReplicaAddress.ID_RULE)
                .hasMessageContaining("'spark 0'");
        assertThatThrownBy(() -> new Replica(null, "10.0.0.5:15002", null, ReplicaState.READY))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void replicaRecordRejectsBadAddressWithTheRuleAndTheValue() {
        assertThatThrownBy(() -> new Replica("spark-0", "spark-0:15002", null, ReplicaState.READY))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("spark-0")
                .hasMessageContaining("'spark-0:15002'")
                .hasMessageContaining("literal ip:port");
        assertThatThrownBy(() -> new Replica("spark-0", null, null, ReplicaState.READY))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void replicaRecordRequiresAState() {
        assertThatThrownBy(() -> new Replica("spark-0", "10.0.0.5:15002", null, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("state");
    }

    @Test
    void onlyReadyReplicasTakeNewSessions() {
        assertThat(new Replica("a", "10.0.0.5:1", null, ReplicaState.READY).takesNewSessions()).isTrue();
        assertThat(new Replica("a", "10.0.0.5:1", null, ReplicaState.WARMING).takesNewSessions()).isFalse();
        assertThat(new Replica("a", "10.0.0.5:1", null, ReplicaState.DRAINING).takesNewSessions()).isFalse();
    }

    @Test
    void replicaStateParsesWireNamesOnly() {
        assertThat(ReplicaState.parse("ready")).contains(ReplicaState.READY);
        assertThat(ReplicaState.parse(" Warming ")).contains(ReplicaState.WARMING);
        assertThat(ReplicaState.parse("DRAINING")).contains(ReplicaState.DRAINING);
        assertThat(ReplicaState.parse("starting")).isEmpty();
        assertThat(ReplicaState.parse(null)).isEmpty();
        for (ReplicaState s : ReplicaState.values()) {
            assertThat(ReplicaState.parse(s.wireName())).contains(s);
        }
    }
}
