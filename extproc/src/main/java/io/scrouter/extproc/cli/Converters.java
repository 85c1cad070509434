package io.scrouter.extproc.cli;

import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.Durations;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;

/** Option values in the syntax of the configuration file, with the file's error messages. */
public final class Converters {

    private Converters() {
    }

    /** {@code 250ms}, {@code 10s}, {@code 30m}, {@code 2h}: the duration syntax of the configuration file. */
    public static final class DurationValue implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Durations.parse("duration", value);
            } catch (ConfigException e) {
                throw new TypeConversionException("give a duration such as 250ms, 10s, 30m or 2h, not '" + value + "'");
            }
        }
    }

    /** {@code host:port} with a port between 1 and 65535; IPv6 hosts in brackets ({@code [::1]:9002}). */
    public static final class HostPortValue implements ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            return HostPort.parse(value);
        }
    }

    /** A network address given on the command line. */
    public record HostPort(String host, int port) {

        public static HostPort parse(String value) {
            int colon = value.lastIndexOf(':');
            if (colon <= 0 || colon == value.length() - 1) {
                throw new TypeConversionException("give host:port, for example 127.0.0.1:9002, not '" + value + "'");
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new TypeConversionException("the port of '" + value + "' must be a number from 1 to 65535");
            }
            return new HostPort(host, port);
        }

        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }
}
