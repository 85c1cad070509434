package io.scrouter.extproc.routing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Session ids become Redis keys and log fields, so only canonical UUIDs may pass; everything else is
 * rejected before any I/O.
 */
class SessionIdsTest {

    @ParameterizedTest
    @ValueSource(strings = {
            "123e4567-e89b-12d3-a456-426614174000",
            "123E4567-E89B-12D3-A456-426614174000",
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "FFFFFFFF-ffff-FfFf-fFfF-AbCdEf012345"})
    void canonicalUuidsInEitherCaseAreAccepted(String id) {
        assertThat(SessionIds.isValid(id)).isTrue();
    }

    @Test
    void everyRandomUuidIsAccepted() {
        for (int i = 0; i < 1000; i++) {
            String id = UUID.randomUUID().toString();
            assertThat(SessionIds.isValid(id)).as(id).isTrue();
            assertThat(SessionIds.isValid(id.toUpperCase())).as(id).isTrue();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "123e4567-e89b-12d3-a456-42661417400",      // 35 characters
            "123e4567-e89b-12d3-a456-4266141740000",    // 37 characters
            "123e4567e89b-12d3-a456-4266141740000",     // dash missing, length kept
            "123e456-7e89b-12d3-a456-426614174000",     // dash one place early
            "123e4567-e89b-12d3-a4564-26614174000",     // dash one place late
            "123e4567-e89b-12d3-a456_426614174000",
            "123e4567+e89b-12d3-a456-426614174000",
            "123e4567-e89b-12d3-a456-42661417400g",     // not hex
            "123e4567-e89b-12d3-a456-42661417400G",
            "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",
            "123e4567-e89b-12d3-a456-42661417400１",    // fullwidth digit one
            "１２３e4567-e89b-12d3-a456-426614174000",  // 36 chars, fullwidth digits
            "123e4567-e89b-12d3-a456-42661417400٠",     // Arabic-Indic digit zero
            "123e4567-e89b-12d3-a456-42661417400Ａ",    // fullwidth A
            "123e4567-e89b-12d3-a456-42661417400é",
            "123e4567-e89b-12d3-a456-4266141740\r\n",   // CRLF in place of the last two digits
            "123e4567-e89b-12d3-a456-426614174000\r\n",
            "123e4567-e89b-12d3-a456-42661417400 ",
            " 123e4567-e89b-12d3-a456-42661417400",
            "{123e4567-e89b-12d3-a456-42661417400}",
            "------------------------------------",
            "sess:123e4567-e89b-12d3-a456-426614",
    })
    void anythingElseIsRejected(String id) {
        assertThat(SessionIds.isValid(id)).isFalse();
    }

    @ParameterizedTest
    @NullAndEmptySource
    void nullAndEmptyAreRejected(String id) {
        assertThat(SessionIds.isValid(id)).isFalse();
    }

    @Test
    void maxLengthIsTheLengthOfAUuid() {
        assertThat(SessionIds.MAX_LENGTH).isEqualTo(UUID.randomUUID().toString().length());
    }

    @Test
    void canonicalLowerCasesSoBothSpellingsShareOneBinding() {
        assertThat(SessionIds.canonical("123E4567-E89B-12D3-A456-426614174ABC"))
                .isEqualTo("123e4567-e89b-12d3-a456-426614174abc");
        assertThat(SessionIds.canonical("123e4567-e89b-12d3-a456-426614174abc"))
                .isEqualTo("123e4567-e89b-12d3-a456-426614174abc");
    }
}
