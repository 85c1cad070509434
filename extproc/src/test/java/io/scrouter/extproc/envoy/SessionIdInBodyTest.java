package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Reading session_id from the first bytes of a gRPC-framed Spark Connect request, however they arrive. */
class SessionIdInBodyTest {

    private static SessionIdInBody.Outcome readAll(byte[] body) {
        return new SessionIdInBody().append(ByteString.copyFrom(body), true);
    }

    private static SessionIdInBody.Invalid invalid(SessionIdInBody.Outcome outcome) {
        assertThat(outcome).isInstanceOf(SessionIdInBody.Invalid.class);
        SessionIdInBody.Invalid invalid = (SessionIdInBody.Invalid) outcome;
        assertThat(invalid.rejection().code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        // Every rejection tells the user the remedy that always works.
        assertThat(invalid.rejection().message()).contains("Add x-spark-session-id to the connection string",
                "session_id=<uuid>;x-spark-session-id=<uuid>");
        return invalid;
    }

    @Test
    void anyUuidSplitAnywhereIsReadOnceItsLastByteArrives() {
        Random random = new Random(20261129);
        for (int trial = 0; trial < 500; trial++) {
            String id = UUID.randomUUID().toString();
            if (random.nextBoolean()) {
                id = id.toUpperCase(java.util.Locale.ROOT);
            }
            byte[] body = SparkRequestBodies.framed(id, random.nextInt(300));
            TreeSet<Integer> cuts = new TreeSet<>();
            int pieces = random.nextInt(12);
            for (int i = 0; i < pieces; i++) {
                cuts.add(1 + random.nextInt(body.length - 1));
            }
            SessionIdInBody reader = new SessionIdInBody();
            int from = 0;
            SessionIdInBody.Outcome outcome = null;
            for (int cut : cuts) {
                outcome = reader.append(ByteString.copyFrom(Arrays.copyOfRange(body, from, cut)), false);
                if (cut < SessionIdInBody.MAX_PREFIX) {
                    assertThat(outcome).as("trial %d: %d of 43 bytes", trial, cut)
                            .isInstanceOf(SessionIdInBody.NeedMore.class);
                } else {
                    assertThat(outcome).as("trial %d", trial).isEqualTo(new SessionIdInBody.Found(id));
                }
                from = cut;
            }
            outcome = reader.append(ByteString.copyFrom(Arrays.copyOfRange(body, from, body.length)), true);
            assertThat(outcome).as("trial %d", trial).isEqualTo(new SessionIdInBody.Found(id));
        }
    }

    @Test
    void compressedFirstMessageIsRejectedWithTheHeaderAsTheRemedy() {
        byte[] body = SparkRequestBodies.framed(UUID.randomUUID().toString(), 10);
        body[0] = 1;
        assertThat(invalid(readAll(body)).rejection().message()).contains("compressed");
        // Known from the first byte alone: no need to wait for more.
        assertThat(new SessionIdInBody().append(ByteString.copyFrom(new byte[] {1}), false))
                .isInstanceOf(SessionIdInBody.Invalid.class);
    }

    @Test
    void bodyThatIsNotGrpcIsRejected() {
        assertThat(invalid(readAll("POST / HTTP/1.1".getBytes())).rejection().reason()).isEqualTo("not_grpc_body");
    }

    @Test
    void messageNotStartingWithSessionIdIsRejected() {
        byte[] message = {0x12, 3, 'a', 'b', 'c', 0x0A, 1, 'x'};
        assertThat(invalid(readAll(SparkRequestBodies.frame(0, message))).rejection().reason())
                .isEqualTo("no_session_id_in_body");
        // An empty message (every field at its default) has no session_id either.
        assertThat(invalid(readAll(SparkRequestBodies.frame(0, new byte[0]))).rejection().reason())
                .isEqualTo("no_session_id_in_body");
    }

    @Test
    void oversizeSessionIdIsRejectedWithoutReadingIt() {
        java.io.ByteArrayOutputStream message = new java.io.ByteArrayOutputStream();
        message.write(0x0A);
        SparkRequestBodies.writeVarint(message, 100_000);
        byte[] start = SparkRequestBodies.frame(0, message.toByteArray());
        SessionIdInBody.Outcome outcome = new SessionIdInBody().append(ByteString.copyFrom(start), false);
        assertThat(invalid(outcome).rejection().message()).contains("too long");
        byte[] thirtySeven = SparkRequestBodies.framed(UUID.randomUUID() + "0", 0);
        assertThat(invalid(readAll(thirtySeven)).rejection().message()).contains("too long");
    }

    @Test
    void sessionIdThatIsNotAUuidIsRejectedWithoutEchoingIt() {
        String notUuid = "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz";
        SessionIdInBody.Invalid invalid = invalid(readAll(SparkRequestBodies.framed(notUuid, 5)));
        assertThat(invalid.rejection().message()).contains("not a UUID").doesNotContain(notUuid);
        assertThat(invalid(readAll(SparkRequestBodies.framed("", 5))).rejection().message()).contains("empty");
    }

    @Test
    void lengthClaimingMoreThanTheMessageHoldsIsRejected() {
        String id = UUID.randomUUID().toString();
        byte[] body = SparkRequestBodies.framed(id, 0);
        // Shrink the frame's message length below the id's: the id would run past the message.
        body[4] = 10;
        assertThat(invalid(readAll(body)).rejection().reason()).isEqualTo("no_session_id_in_body");
    }

    @Test
    void emptyOrTruncatedBodyAtEndOfStreamIsRejected() {
        assertThat(invalid(new SessionIdInBody().append(ByteString.EMPTY, true)).rejection().reason())
                .isEqualTo("empty_body");
        byte[] body = SparkRequestBodies.framed(UUID.randomUUID().toString(), 0);
        assertThat(invalid(readAll(Arrays.copyOf(body, 20))).rejection().reason()).isEqualTo("truncated_body");
    }

    @Test
    void onlyThePrefixIsKeptWhateverTheBodySize() {
        String id = UUID.randomUUID().toString();
        SessionIdInBody reader = new SessionIdInBody();
        byte[] big = SparkRequestBodies.framed(id, 4 << 20);
        assertThat(reader.append(ByteString.copyFrom(big), false)).isEqualTo(new SessionIdInBody.Found(id));
    }
}
