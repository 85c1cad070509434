package io.scrouter.extproc.pool;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Validation of what may enter the pool. Envoy's {@code ORIGINAL_DST} cluster connects to whatever
 * {@code ip:port} the route header holds and does no DNS, so only literal IPv4 or bracketed IPv6 addresses
 * with a port are accepted; anything else is refused before it can ever be written to a request.
 */
public final class ReplicaAddress {

    public static final String ID_RULE = "must be 1-64 characters of letters, digits, '.', '_' or '-'";
    public static final String ADDRESS_RULE = "must be a literal ip:port such as 10.0.0.5:15002 or [fd00::5]:15002"
            + " (Envoy's ORIGINAL_DST cluster does no DNS)";

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern IPV4 = Pattern.compile(
            "((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

    private ReplicaAddress() {
    }

    public static boolean isValidId(String id) {
        return id != null && ID.matcher(id).matches();
    }

    /**
     * Full IPv6 syntax check. The character pattern above guarantees a literal (no letters beyond hex, so
     * no name lookup can happen); the JDK parser then rejects what is not a valid address, such as
     * {@code :::::} or nine groups.
     */
    private static boolean isIpv6Literal(String text) {
        try {
            return InetAddress.getByName("[" + text + "]") instanceof Inet6Address;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** The address in canonical text if it is a literal {@code ip:port}, else empty. */
    public static Optional<String> parse(String text) {
        if (text == null || text.length() > 64) {
            return Optional.empty();
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            return Optional.empty();
        }
        String host = text.substring(0, colon);
        String port = text.substring(colon + 1);
        if (!port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            return Optional.empty();
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            String inner = host.substring(1, host.length() - 1);
            if (!IPV6.matcher(inner).matches() || !inner.contains(":") || !isIpv6Literal(inner)) {
                return Optional.empty();
            }
        } else if (!IPV4.matcher(host).matches()) {
            return Optional.empty();
        }
        return Optional.of(host + ":" + Integer.parseInt(port));
    }
}
