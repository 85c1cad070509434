package io.scrouter.scorer.probe;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Loads the Spark 4.2.0 REST responses captured in {@code src/test/resources/spark-4.2.0/}. */
final class SparkSamples {

    /**
     * No {@code /applications} response was captured with the samples; this is a minimal list in the shape
     * Spark returns (one application, id first), written by hand for the tests that need an application id.
     */
    static final String APP_ID = "local-1764442685123";

    static final byte[] APPLICATIONS = applications(APP_ID);

    private SparkSamples() {
    }

    static byte[] applications(String id) {
        return ("[ {\n  \"id\" : \"" + id + "\",\n  \"name\" : \"Spark Connect server\",\n"
                + "  \"attempts\" : [ { \"completed\" : false, \"sparkUser\" : \"root\" } ]\n} ]")
                .getBytes(StandardCharsets.UTF_8);
    }

    static byte[] load(String name) {
        String path = "/spark-4.2.0/" + name;
        try (InputStream in = SparkSamples.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("test resource missing: " + path);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
