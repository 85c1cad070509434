package io.scrouter.extproc.config;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaAddress;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the YAML configuration, applies environment overrides, and validates everything at start-up.
 *
 * <p>Environment overrides exist for the knobs a deployment changes without editing the file (see
 * {@link #ENV_OVERRIDES}); they win over the file.
 */
public final class ConfigLoader {

    /** Environment variable → dotted config key. */
    public static final Map<String, String> ENV_OVERRIDES = Map.of(
            "SCROUTER_PORT", "server.port",
            "SCROUTER_BIND_ADDRESS", "server.bindAddress",
            "SCROUTER_REDIS_ADDRESS", "redis.address",
            "SCROUTER_REDIS_PASSWORD", "redis.password",
            "SCROUTER_REDIS_MODE", "redis.mode",
            "SCROUTER_POLICY", "placement.policy",
            "SCROUTER_SESSION_IDLE_TTL", "sessions.idleTtl",
            "SCROUTER_ADMIN_PORT", "admin.port",
            "SCROUTER_METRICS_PORT", "metrics.port");

    /**
     * Duplicate keys are an error, not "last one wins": two {@code server:} blocks would otherwise silently drop
     * the first block's settings, and a file that reads right would run with values nobody wrote.
     */
    private static final ObjectMapper YAML = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());
    private static final Duration MS = Duration.ofMillis(1);
    private static final Duration DAY = Duration.ofDays(1);

    private ConfigLoader() {
    }

    public static RouterConfig load(Path file, Map<String, String> env) {
        try {
            return parse(Files.readString(file), env);
        } catch (IOException e) {
            throw new ConfigException("--config", "could not read " + file + ": " + e.getMessage());
        }
    }

    /** The configuration of an empty file with one static replica: every default, for tests and tools. */
    public static RouterConfig withDefaults() {
        return parse("pool: {static: [{id: default, grpc: \"127.0.0.1:15002\"}]}", Map.of());
    }

    public static RouterConfig parse(String yaml, Map<String, String> env) {
        JsonNode root;
        try {
            root = yaml.isBlank() ? JsonNodeFactory.instance.objectNode() : YAML.readTree(yaml);
        } catch (JsonParseException e) {
            throw duplicateKey(e).orElseGet(() -> new ConfigException("(file)", "is not valid YAML: " + e.getMessage()));
        } catch (IOException e) {
            throw new ConfigException("(file)", "is not valid YAML: " + e.getMessage());
        }
        if (root == null || root.isNull() || root.isMissingNode()) {
            root = JsonNodeFactory.instance.objectNode();
        }
        if (!root.isObject()) {
            throw new ConfigException("(root)", "must be a mapping of sections (server, redis, pool, ...)");
        }
        applyEnv((ObjectNode) root, env);
        return build(new Section("", root));
    }

    /**
     * Jackson reports a duplicate as "Duplicate field 'port'" with the parser still inside the mapping that
     * holds it, so the mapping's path plus the field name is the full dotted key the operator wrote twice.
     */
    private static Optional<ConfigException> duplicateKey(JsonParseException e) {
        String message = e.getOriginalMessage();
        String prefix = "Duplicate field '";
        if (message == null || !message.startsWith(prefix) || e.getProcessor() == null) {
            return Optional.empty();
        }
        String field = message.substring(prefix.length(), message.indexOf('\'', prefix.length()));
        // Walk outwards from the mapping that holds the duplicate: each enclosing mapping adds ".name", each
        // enclosing list "[index]".
        String key = field;
        JsonStreamContext holder = e.getProcessor().getParsingContext();
        for (JsonStreamContext c = holder == null ? null : holder.getParent(); c != null && !c.inRoot();
             c = c.getParent()) {
            key = c.inArray() ? "[" + c.getCurrentIndex() + "]." + key
                    : c.getCurrentName() + (key.startsWith("[") ? "" : ".") + key;
        }
        int line = e.getLocation() == null ? -1 : e.getLocation().getLineNr();
        return Optional.of(new ConfigException(key, "appears twice" + (line > 0 ? " (again at line " + line + ")" : "")
                + "; YAML would keep only the last one. Merge the two into one"));
    }

    private static void applyEnv(ObjectNode root, Map<String, String> env) {
        for (Map.Entry<String, String> o : ENV_OVERRIDES.entrySet()) {
            String value = env.get(o.getKey());
            if (value == null || value.isEmpty()) {
                continue;
            }
            String[] parts = o.getValue().split("\\.");
            JsonNode section = root.get(parts[0]);
            ObjectNode target = section instanceof ObjectNode obj ? obj : root.putObject(parts[0]);
            target.put(parts[1], value);
        }
    }

    private static RouterConfig build(Section root) {
        Section s = root.section("server");
        RouterConfig.Server server = new RouterConfig.Server(
                s.string("bindAddress", "0.0.0.0"),
                s.integer("port", 9002, 0, 65535),
                s.duration("decisionDeadline", Duration.ofMillis(150), MS, Duration.ofSeconds(10)),
                s.duration("drainPeriod", Duration.ofSeconds(10), Duration.ZERO, Duration.ofMinutes(10)),
                s.integer("maxBufferedBodyBytes", 1 << 20, 64 << 10, 64 << 20),
                s.bool("warmUp", true));
        s.rejectUnknownKeys();

        Optional<RouterConfig.Redis> redis = root.has("redis") ? Optional.of(redis(root.section("redis")))
                : Optional.empty();

        Section p = root.section("pool");
        Duration pollInterval = p.duration("pollInterval", Duration.ofSeconds(1), Duration.ofMillis(50),
                Duration.ofMinutes(5));
        Duration departureGrace = p.duration("departureGrace", Duration.ofSeconds(5), Duration.ZERO,
                Duration.ofHours(1));
        List<RouterConfig.StaticReplica> statics = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (Section r : p.list("static")) {
            String stateText = r.string("state", "ready");
            ReplicaState state = ReplicaState.parse(stateText).orElseThrow(() -> new ConfigException(r.key("state"),
                    "must be ready, warming or draining, got '" + stateText + "'"));
            RouterConfig.StaticReplica replica = new RouterConfig.StaticReplica(
                    r.requiredString("id"), r.requiredString("grpc"), r.string("metricsUrl", null), state,
                    r.string("group", Replica.DEFAULT_GROUP));
            checkReplica(r, replica);
            if (!ids.add(replica.id())) {
                throw new ConfigException(r.key("id"), "repeats replica id '" + replica.id() + "'");
            }
            r.rejectUnknownKeys();
            statics.add(replica);
        }
        p.rejectUnknownKeys();

        Section pr = root.section("probe");
        RouterConfig.Probe probe = new RouterConfig.Probe(
                pr.duration("interval", Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofMinutes(5)),
                pr.duration("timeout", Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMinutes(1)),
                pr.duration("staleAfter", Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofHours(1)));
        pr.rejectUnknownKeys();
        if (probe.staleAfter().compareTo(probe.interval()) < 0) {
            throw new ConfigException("probe.staleAfter", "must be at least probe.interval ("
                    + probe.interval().toMillis() + "ms), or every sample would be stale before the next one");
        }

        Section se = root.section("sessions");
        Duration idleTtl = se.duration("idleTtl", Duration.ofMinutes(30), Duration.ofSeconds(1), Duration.ofDays(30));
        // A released session never outlives an idle one, so the grace defaults to the shorter of the two.
        Duration releaseGraceDefault = idleTtl.compareTo(Duration.ofMinutes(10)) < 0 ? idleTtl : Duration.ofMinutes(10);
        RouterConfig.Sessions sessions = new RouterConfig.Sessions(idleTtl,
                se.duration("refreshEvery", Duration.ofSeconds(30), MS, DAY),
                se.longValue("nearCacheMaxSize", 1_000_000, 1, 100_000_000),
                se.duration("lostTtl", Duration.ofHours(1), Duration.ofSeconds(1), Duration.ofDays(30)),
                se.duration("releaseGrace", releaseGraceDefault, Duration.ofSeconds(1), Duration.ofDays(30)));
        se.rejectUnknownKeys();
        if (sessions.refreshEvery().compareTo(sessions.idleTtl()) >= 0) {
            throw new ConfigException("sessions.refreshEvery", "must be shorter than sessions.idleTtl ("
                    + sessions.idleTtl() + "), or busy sessions would expire in the store");
        }
        if (sessions.releaseGrace().compareTo(sessions.idleTtl()) > 0) {
            throw new ConfigException("sessions.releaseGrace", "must not be longer than sessions.idleTtl ("
                    + sessions.idleTtl() + "): a released session would outlive an idle one");
        }

        Section pl = root.section("placement");
        String policy = pl.string("policy", Policies.DEFAULT);
        if (!Policies.NAMES.contains(policy)) {
            throw new ConfigException(pl.key("policy"), "names no known policy: '" + policy + "'; choose one of "
                    + Policies.NAMES);
        }
        RouterConfig.Placement placement = new RouterConfig.Placement(policy,
                pl.decimal("utilisationWeight", PolicySettings.DEFAULTS.utilisationWeight(), 0.0, 1000.0),
                pl.decimal("sessionWeight", PolicySettings.DEFAULTS.sessionWeight(), 0.0, 1000.0),
                pl.longValue("sessionCap", PolicySettings.DEFAULTS.sessionCap(), 1, 1_000_000),
                pl.decimal("ewmaAlpha", 0.5, 0.001, 1.0));
        pl.rejectUnknownKeys();
        if (placement.utilisationWeight() + placement.sessionWeight() == 0) {
            throw new ConfigException("placement.sessionWeight",
                    "and placement.utilisationWeight cannot both be 0");
        }

        Section a = root.section("admin");
        RouterConfig.Admin admin = new RouterConfig.Admin(a.string("bindAddress", "127.0.0.1"),
                a.integer("port", -1, -1, 65535));
        a.rejectUnknownKeys();

        Section m = root.section("metrics");
        RouterConfig.Metrics metrics = new RouterConfig.Metrics(m.string("bindAddress", "0.0.0.0"),
                m.integer("port", -1, -1, 65535));
        m.rejectUnknownKeys();

        Optional<RouterConfig.Groups> groups = root.has("groups")
                ? Optional.of(GroupsSection.read(root.section("groups"))) : Optional.empty();

        root.rejectUnknownKeys();
        if (redis.isEmpty() && statics.isEmpty()) {
            throw new ConfigException("pool.static", "is empty and no redis is configured: the router would "
                    + "know no replica; list replicas under pool.static or configure redis");
        }
        return new RouterConfig(server, redis, new RouterConfig.Pool(pollInterval, List.copyOf(statics), departureGrace), probe,
                sessions, placement, admin, metrics, groups);
    }

    private static RouterConfig.Redis redis(Section r) {
        String modeText = r.string("mode", "single");
        RouterConfig.RedisMode mode = RouterConfig.RedisMode.parse(modeText).orElseThrow(() -> new ConfigException(
                r.key("mode"), "must be single, sentinel or cluster, got '" + modeText + "'"));
        List<String> addresses = new ArrayList<>();
        String address = r.string("address", null);
        if (address != null) {
            addresses.add(address);
        }
        addresses.addAll(r.stringList("addresses"));
        if (addresses.isEmpty()) {
            throw new ConfigException(r.key("address"), "is required when a redis section is present "
                    + "(for example redis://127.0.0.1:6379); remove the section to use the embedded store");
        }
        for (String a : addresses) {
            if (!a.startsWith("redis://") && !a.startsWith("rediss://")) {
                throw new ConfigException(r.key("address"), "must start with redis:// or rediss://, got '" + a + "'");
            }
        }
        // Single mode uses the first address only: a list of cluster seeds or sentinels under it would otherwise
        // start, and fail on every call with errors that do not say why ("MOVED redirection loop").
        if (mode == RouterConfig.RedisMode.SINGLE && addresses.size() > 1) {
            throw new ConfigException(r.key("mode"), "is single (the default), which uses one address, but "
                    + addresses.size() + " are listed: set redis.mode to cluster (they are seed nodes) or sentinel "
                    + "(they are sentinels), or list one address");
        }
        String masterName = r.string("masterName", null);
        if (mode == RouterConfig.RedisMode.SENTINEL && (masterName == null || masterName.isBlank())) {
            throw new ConfigException(r.key("masterName"), "is required in sentinel mode");
        }
        String password = r.string("password", null);
        RouterConfig.StoreCalls defaults = RouterConfig.StoreCalls.DEFAULTS;
        int database = r.integer("database", 0, 0, 15);
        Duration timeout = r.duration("timeout", defaults.timeout(), MS, Duration.ofSeconds(10));
        String keyPrefix = r.string("keyPrefix", "scr");
        Duration settle = r.duration("settleAfterOutage", defaults.settleAfterOutage(), Duration.ZERO,
                Duration.ofMinutes(10));
        Section b = r.section("breaker");
        RouterConfig.StoreCalls calls = new RouterConfig.StoreCalls(timeout, settle,
                b.integer("failures", defaults.breakerFailures(), 1, 1000),
                b.duration("coolDown", defaults.breakerCoolDown(), MS, Duration.ofMinutes(10)));
        b.rejectUnknownKeys();
        Duration gather = r.duration("followUpGather", RouterConfig.Redis.DEFAULT_FOLLOW_UP_GATHER, Duration.ZERO,
                RouterConfig.Redis.MAX_FOLLOW_UP_GATHER);
        RouterConfig.Redis redis = new RouterConfig.Redis(mode, List.copyOf(addresses), masterName,
                password == null || password.isEmpty() ? null : password, database, keyPrefix, calls, gather);
        if (mode == RouterConfig.RedisMode.CLUSTER && redis.database() != 0) {
            throw new ConfigException(r.key("database"), "must be 0 in cluster mode: Redis Cluster has only database 0, "
                    + "got " + redis.database());
        }
        if (!redis.keyPrefix().matches("[A-Za-z0-9_.-]{1,32}")) {
            throw new ConfigException(r.key("keyPrefix"), "must be 1-32 letters, digits, '_', '.' or '-'");
        }
        r.rejectUnknownKeys();
        return redis;
    }

    private static void checkReplica(Section r, RouterConfig.StaticReplica replica) {
        if (!ReplicaAddress.isValidId(replica.id())) {
            throw new ConfigException(r.key("id"), ReplicaAddress.ID_RULE + ", got '" + replica.id() + "'");
        }
        if (!ReplicaAddress.isValidId(replica.group())) {
            throw new ConfigException(r.key("group"), ReplicaAddress.ID_RULE + ", got '" + replica.group() + "'");
        }
        if (ReplicaAddress.parse(replica.grpc()).isEmpty()) {
            throw new ConfigException(r.key("grpc"), ReplicaAddress.ADDRESS_RULE + ", got '" + replica.grpc() + "'");
        }
        if (replica.metricsUrl() != null && !replica.metricsUrl().matches("https?://.+")) {
            throw new ConfigException(r.key("metricsUrl"), "must be an http:// or https:// URL, got '"
                    + replica.metricsUrl() + "'");
        }
    }
}
