package io.scrouter.loadtest.scenario;

/** A scenario file or override that cannot be used; the message names the key and says what is expected. */
public final class ScenarioException extends IllegalArgumentException {

    public ScenarioException(String key, String problem) {
        super("scenario key '" + key + "' " + problem);
    }
}
