package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KnownSessionBinderTest {

    /** A server whose answers the test gives by hand, in the order it chooses. */
    private static final class HeldAnswers implements KnownSessionBinder.Sender {
        final List<String> sent = Collections.synchronizedList(new ArrayList<>());
        final Map<String, CompletableFuture<String>> pending = new ConcurrentHashMap<>();

        @Override
        public CompletableFuture<String> send(String session) {
            sent.add(session);
            CompletableFuture<String> answer = new CompletableFuture<>();
            pending.put(session, answer);
            return answer;
        }

        void answer(String session, String refusal) {
            pending.remove(session).complete(refusal);
        }
    }

    @Test
    void aLateLookForWorkByAFinishedPassTakesNothingOfTheNextPass() throws Exception {
        HeldAnswers server = new HeldAnswers();
        KnownSessionBinder.Pass first = new KnownSessionBinder.Pass(List.of("a", "b"), server).start(2);
        server.answer("a", null);
        server.answer("b", "store_timeout");
        assertTrue(first.await(0, TimeUnit.SECONDS));
        assertEquals(Map.of("b", "store_timeout"), first.refused());

        KnownSessionBinder.Pass second = new KnownSessionBinder.Pass(first.refused().keySet(), server);
        // What the callback that counted the first pass's last answer does next, here after the second pass exists.
        first.next();
        assertEquals(List.of("a", "b"), server.sent, "the finished pass sent nothing more");

        second.start(2);
        assertEquals(List.of("a", "b", "b"), server.sent);
        assertFalse(second.await(0, TimeUnit.SECONDS));
        server.answer("b", null);
        assertTrue(second.await(0, TimeUnit.SECONDS), "the second pass counts its own answer");
        assertEquals(Map.of(), second.refused());
    }

    @Test
    void refusedSessionsAreSentAgainUntilBound() throws Exception {
        Map<String, AtomicInteger> tries = new ConcurrentHashMap<>();
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            sessions.add("s" + i);
        }
        // Every third session is refused twice, then bound; answers come on other threads, as gRPC's do.
        KnownSessionBinder.bind("router-x", sessions, s -> CompletableFuture.supplyAsync(() -> {
            int n = tries.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
            return Integer.parseInt(s.substring(1)) % 3 == 0 && n <= 2 ? "store_timeout" : null;
        }));
        for (String s : sessions) {
            assertEquals(Integer.parseInt(s.substring(1)) % 3 == 0 ? 3 : 1, tries.get(s).get(), s);
        }
    }

    @Test
    void aSessionStillRefusedAfterEveryPassFailsNamingTheServerAndTheReason() {
        AtomicInteger tries = new AtomicInteger();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> KnownSessionBinder.bind("router-x", List.of("s0", "s1"), s -> CompletableFuture.completedFuture(
                        s.equals("s1") && tries.incrementAndGet() > 0 ? "store_unreachable" : null)));
        assertEquals(KnownSessionBinder.PASSES, tries.get());
        assertEquals("binding the known sessions on router-x failed for 1 sessions after "
                + KnownSessionBinder.PASSES + " passes, e.g.: store_unreachable", e.getMessage());
    }

    @Test
    void aSendThatThrowsCountsAsARefusalNotAsAHang() throws Exception {
        KnownSessionBinder.Pass p = new KnownSessionBinder.Pass(List.of("a"), s -> {
            throw new IllegalStateException("channel shut down");
        }).start(1);
        assertTrue(p.await(0, TimeUnit.SECONDS));
        assertEquals("java.lang.IllegalStateException: channel shut down", p.refused().get("a"));
    }
}
