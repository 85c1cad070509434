package io.scrouter.testkit.envoy;

import java.util.Locale;
import java.util.Set;

/**
 * Which header mutations from the processor Envoy applies with the default (unset) mutation rules.
 * Follows {@code source/extensions/filters/common/mutation_rules/mutation_rules.cc}, {@code Checker::isAllowed}:
 * a refused mutation is ignored silently ({@code CheckResult::IGNORE}), only counted.
 */
final class MutationRules {

    /** "Extra routing headers" refused unless {@code allow_all_routing}. */
    private static final Set<String> ROUTING = Set.of("host", ":authority", ":method", ":scheme");
    /** Envoy's internal header prefix, refused unless {@code allow_envoy}. */
    private static final String ENVOY_PREFIX = "x-envoy-";

    private MutationRules() {
    }

    static boolean maySet(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return !ROUTING.contains(n) && !n.startsWith(ENVOY_PREFIX);
    }

    /** A remove of {@code host} or of any pseudo-header is never allowed. */
    static boolean mayRemove(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return !n.equals("host") && !n.startsWith(":") && !n.startsWith(ENVOY_PREFIX);
    }

    /**
     * {@code Checker::isValidValue}: header values may not hold NUL, CR or LF. Unlike a refused name this is
     * an error whatever the rules ({@code MutationUtils::applyHeaderMutations} returns InvalidArgument).
     */
    static boolean isValidValue(byte[] value) {
        for (byte b : value) {
            if (b == 0 || b == '\r' || b == '\n') {
                return false;
            }
        }
        return true;
    }
}
