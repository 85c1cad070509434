package io.scrouter.loadtest.fault;

import io.scrouter.loadtest.traffic.TrafficDriver.Result;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class FiguresTest {

    private static Result r(long at, String session, int router, String upstream, int status) {
        return new Result(at, session, router, upstream, status, 1_000_000, false);
    }

    @Test
    void homeIsTheFirstAddressByStartTimeWhateverTheCompletionOrder() {
        List<Result> rs = List.of(r(20, "s", 1, "b", -1), r(10, "s", 0, "a", -1), r(5, "t", 0, null, 14));
        assertThat(Figures.homes(rs)).containsOnlyKeys("s").containsEntry("s", "a");
        assertThat(Figures.offHome(rs, Figures.homes(rs))).isEqualTo(1);
    }

    @Test
    void routersDisagreeOnlyWhenTheirFirstAnswersDiffer() {
        List<Result> rs = List.of(
                r(1, "same", 0, "a", -1), r(2, "same", 1, "a", -1),
                r(1, "split", 0, "a", -1), r(2, "split", 1, "b", -1), r(3, "split", 1, "a", -1),
                r(1, "one-router", 0, "a", -1), r(2, "one-router", 0, "b", -1));
        // A session that moved within one router is a moved session, not a disagreement between routers.
        assertThat(Figures.placedDifferently(rs)).containsExactly("split");
    }

    @Test
    void refusalsAreCountedByStatusName() {
        List<Result> rs = List.of(r(1, "a", 0, null, 14), r(2, "b", 0, null, 14), r(3, "c", 1, null, 9),
                r(4, "d", 1, null, Figures.TRANSPORT_ERROR), r(5, "e", 0, "x", -1));
        assertThat(Figures.refusals(rs)).containsEntry("UNAVAILABLE", 2L).containsEntry("FAILED_PRECONDITION", 1L)
                .containsEntry("transport", 1L).hasSize(3);
    }

    @Test
    void quantilesUseNearestRank() {
        List<Result> rs = List.of(new Result(0, "a", 0, "x", -1, 1_000_000, false),
                new Result(0, "a", 0, "x", -1, 2_000_000, false), new Result(0, "a", 0, "x", -1, 3_000_000, false),
                new Result(0, "a", 0, "x", -1, 4_000_000, false));
        assertThat(Figures.millis(rs, 0.5)).isEqualTo(2.0);
        assertThat(Figures.millis(rs, 0.99)).isEqualTo(4.0);
        assertThat(Figures.millis(List.of(), 0.5)).isNaN();
    }
}
