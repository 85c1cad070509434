package io.scrouter.extproc.config;

/** A configuration value is missing or wrong. The message names the key, so operators can find it. */
public final class ConfigException extends RuntimeException {

    private final String key;

    public ConfigException(String key, String problem) {
        super("config key '" + key + "' " + problem);
        this.key = key;
    }

    public String key() {
        return key;
    }
}
