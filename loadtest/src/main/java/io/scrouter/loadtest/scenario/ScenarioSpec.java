package io.scrouter.loadtest.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaAddress;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Everything a simulated run depends on, read from a scenario file: the clients (who arrives when, and what
 * they do) and the cluster (replicas, routers, how fresh their metrics are, what changes mid-run). Every
 * default lives in {@link #read}, and {@link #toTree} writes a spec back so that a resolved or fitted
 * scenario can be saved as a file.
 *
 * @param name       short name used on the command line, in tables and file names
 * @param summary    one line for tables and charts
 * @param durationMillis new sessions arrive and queries start only before this
 * @param warmupMillis queries sent before this are not measured; the sessions already open when a real
 *                   measurement would start arrive during it
 * @param snapshotAtMillis when sessions per replica are counted for the report
 * @param teams      groups of clients that each arrive and query in their own way; when there are any, every
 *                   session belongs to one of them and {@code clients} is only what they share (each team's
 *                   {@code clients} is merged over it); empty: the sessions are those of {@code clients}
 */
public record ScenarioSpec(String name, String summary, long durationMillis, long warmupMillis,
                           long snapshotAtMillis, Clients clients, List<Team> teams, Cluster cluster) {

    public ScenarioSpec {
        teams = List.copyOf(teams);
    }

    /** A spec without teams. */
    public ScenarioSpec(String name, String summary, long durationMillis, long warmupMillis, long snapshotAtMillis,
                        Clients clients, Cluster cluster) {
        this(name, summary, durationMillis, warmupMillis, snapshotAtMillis, clients, List.of(), cluster);
    }

    /**
     * The clients of one team. Its name is its sessions' group as the router would read it from the group header
     * ({@code cluster.groups} decides where such sessions may go).
     */
    public record Team(String name, Clients clients) {
    }

    /** How a session's next query is timed. */
    public enum Loop {
        /** After the previous query's result plus a think time: a user waits for a result. */
        CLOSED,
        /** A think time after the previous query was sent, finished or not: offered load fixed by the trace. */
        OPEN
    }

    /**
     * @param loop             closed (wait for the result, then think) or open
     * @param initialSessions  sessions already open at the start, arriving spread over the warm-up; -1 means
     *                         the steady-state number (arrival rate × mean lifetime)
     * @param sessionsPerSecond mean arrival rate of new sessions (at the daily peak when {@code dayCycle})
     * @param dayCycle         the rate follows one compressed day over the run: quiet night, peak mid-run
     * @param nightShare       the day cycle's lowest rate as a share of the peak
     * @param profile          piecewise-constant arrival rate (a fitted log); when not empty it replaces
     *                         {@code sessionsPerSecond} and the day cycle
     * @param bursts           crowds of sessions that all start within a short window
     * @param lifetime         how long a session stays open
     * @param firstQueryAfterMillis mean delay (exponential) from a session's start to its first query
     * @param think            a user's think time between a result and the next query (before intensity)
     * @param intensity        how much more often some users query than others
     * @param heavy            the share and shape of heavy users
     * @param tasks            the distribution of a query's task count
     * @param taskTime         the distribution of a query's task duration
     */
    public record Clients(Loop loop, long initialSessions, double sessionsPerSecond, boolean dayCycle,
                          double nightShare, List<RateStep> profile, List<Burst> bursts, Spread lifetime,
                          long firstQueryAfterMillis, Spread think, Intensity intensity, Heavy heavy,
                          List<TaskWeight> tasks, Spread taskTime) {

        public Clients {
            profile = List.copyOf(profile);
            bursts = List.copyOf(bursts);
            tasks = List.copyOf(tasks);
        }
    }

    /** From {@code fromMillis} on (until the next step), sessions arrive at {@code sessionsPerSecond}. */
    public record RateStep(long fromMillis, double sessionsPerSecond) {
    }

    /**
     * {@code sessions} new sessions start at uniformly random moments within {@code overMillis} of {@code atMillis};
     * {@code heavyShare} of them are heavy users (NaN: the scenario's {@link Heavy#share()}), so a crowd can be of
     * another kind than the steady arrivals (a morning's notebooks with no heavy user among them).
     */
    public record Burst(long atMillis, int sessions, long overMillis, double heavyShare) {

        /** A crowd like the steady arrivals. */
        public Burst(long atMillis, int sessions, long overMillis) {
            this(atMillis, sessions, overMillis, Double.NaN);
        }
    }

    /** A log-normal distribution in milliseconds (median and shape), clipped to [min, max]. */
    public record Spread(double medianMillis, double sigma, long minMillis, long maxMillis) {
    }

    /**
     * Per-user query intensity, a multiplier of the query rate drawn once per session: Pareto with shape
     * {@code alpha} scaled to mean 1 and capped at {@code max} (heavy-tailed: a few users query far more
     * often than most); {@code alpha} 0 gives every user the same intensity.
     */
    public record Intensity(double alpha, double max) {
    }

    /**
     * @param share         fraction of sessions that are heavy
     * @param tasksScale    their queries have this many times the tasks
     * @param taskTimeScale and tasks this many times as long
     * @param thinkScale    and they think this many times as long (less than 1: more often)
     */
    public record Heavy(double share, double tasksScale, double taskTimeScale, double thinkScale) {
    }

    /** A query has {@code tasks} tasks with relative frequency {@code weight}. */
    public record TaskWeight(int tasks, double weight) {
    }

    /**
     * @param replicas       task slots of each replica at the start (named r0, r1, … in this order)
     * @param routers        router instances; each session's first request reaches one at random
     * @param probeIntervalMillis how often each router reads each replica's Spark REST API
     * @param metricsLagMillis how old Spark's own figures are when read (its listener bus and
     *                       {@code spark.ui.liveUpdate.period})
     * @param probeLatencyMillis time from a probe's start to its answer
     * @param probeTimeoutMillis a dead replica's probe fails after this
     * @param poolPollMillis how often each router re-reads the pool and the shared session counts
     * @param storeDelayMillis how long a session count read from the shared store takes to arrive
     * @param publishTtlMillis a failed replica stays published this long
     * @param staleAfterMillis a sample older than this is not fresh
     * @param ewmaAlpha      weight of a sample one probe interval after the previous (router setting)
     * @param sessionCap     the policies' session cap (router setting)
     * @param sustainMillis  the load board's sustain horizon (router setting)
     * @param refreshEveryMillis how often a router pushes a busy session's idle timer to the store
     *                       ({@code sessions.refreshEvery}): the resolution of the recent-session count
     * @param recentWindowMillis a session whose timer was pushed this recently counts as recent (router setting)
     * @param changes        replicas failing, draining and joining, in time order
     * @param replicaGroups  the group of each replica of {@code replicas}, in the same order (as the publisher's
     *                       {@code --group}); empty: all in {@link Replica#DEFAULT_GROUP}, as are replicas that join
     * @param groups         the routers' {@code groups} section, as in a router configuration; empty: every
     *                       session may go to every replica
     */
    public record Cluster(List<Integer> replicas, int routers, long probeIntervalMillis, long metricsLagMillis,
                          long probeLatencyMillis, long probeTimeoutMillis, long poolPollMillis,
                          long storeDelayMillis, long publishTtlMillis, long staleAfterMillis, double ewmaAlpha,
                          long sessionCap, long sustainMillis, long refreshEveryMillis, long recentWindowMillis,
                          List<Change> changes, List<String> replicaGroups, Optional<RouterConfig.Groups> groups) {

        public Cluster {
            replicas = List.copyOf(replicas);
            changes = List.copyOf(changes);
            replicaGroups = List.copyOf(replicaGroups);
        }

        /** The group of the replica started {@code index}-th (joined replicas count on from the initial ones). */
        public String groupOf(int index) {
            return index < replicaGroups.size() ? replicaGroups.get(index) : Replica.DEFAULT_GROUP;
        }
    }

    /**
     * At {@code atMillis}: {@code fail} replicas die at once (their queries are lost, their sessions must start
     * again), {@code drain} replicas stop taking new sessions (theirs stay), and one new, empty replica joins
     * per entry of {@code join} (its task slots). Replicas are taken in start order, skipping dead ones.
     */
    public record Change(long atMillis, int fail, int drain, List<Integer> join) {

        public Change {
            join = List.copyOf(join);
        }
    }

    private static final long HOUR = 3_600_000;
    private static final long DAY = 24 * HOUR;

    /** The task-count mix when a file names none: mostly small interactive queries, a tail to 1024. */
    static final List<TaskWeight> DEFAULT_TASKS = List.of(new TaskWeight(1, 0.25), new TaskWeight(2, 0.10),
            new TaskWeight(4, 0.10), new TaskWeight(8, 0.15), new TaskWeight(16, 0.12), new TaskWeight(32, 0.09),
            new TaskWeight(64, 0.07), new TaskWeight(128, 0.05), new TaskWeight(200, 0.04),
            new TaskWeight(512, 0.02), new TaskWeight(1024, 0.01));

    /** Reads a whole scenario from its (merged) tree; every key not given takes the default written here. */
    static ScenarioSpec read(JsonNode tree) {
        SpecNode root = new SpecNode("", tree);
        String name = root.string("name", null);
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new ScenarioException("name", "is required: 1-64 letters, digits, '.', '_' or '-', got '" + name + "'");
        }
        String summary = root.string("summary", name);
        long duration = root.millis("duration", 40 * 60_000, 1_000, 7 * DAY);
        long warmup = root.millis("warmup", Math.min(5 * 60_000, duration / 4), 0, duration - 1);
        long snapshot = root.millis("snapshotAt", (warmup + duration) / 2, 0, duration);
        root.string("extends", null); // resolved by ScenarioFiles before reading; accepted here
        Clients clients = clients(root.section("clients"), duration);
        List<Team> teams = teams(root.section("teams"), tree.get("clients"), duration);
        Cluster cluster = cluster(root.section("cluster"), duration);
        root.rejectUnknownKeys();
        if (cluster.groups().isPresent()) {
            checkEveryTeamHasAGroup(teams, cluster.groups().get());
        }
        return new ScenarioSpec(name, summary, duration, warmup, snapshot, clients, teams, cluster);
    }

    /** Each team's clients: its own keys merged over the shared {@code clients}, then read like them. */
    private static List<Team> teams(SpecNode t, JsonNode shared, long duration) {
        List<Team> teams = new ArrayList<>();
        for (String name : t.names()) {
            if (!ReplicaAddress.isValidId(name)) {
                throw new ScenarioException(t.key(name), "is not a group name: team names " + ReplicaAddress.ID_RULE);
            }
            JsonNode own = t.raw(name);
            new SpecNode(t.key(name), own); // a team must be a mapping (empty: exactly the shared clients)
            ObjectNode merged = shared != null && shared.isObject() ? ((ObjectNode) shared).deepCopy()
                    : JsonNodeFactory.instance.objectNode();
            if (own != null) {
                ScenarioFiles.merge(merged, (ObjectNode) own);
            }
            teams.add(new Team(name, clients(new SpecNode(t.key(name), merged), duration)));
        }
        return teams;
    }

    /**
     * A session whose group the routers do not know is refused by every router ({@code ReplicaGroups.resolve}), so
     * a team outside {@code groups.allow} is a mistake in the scenario, not something to simulate; so is a
     * scenario without teams whose sessions have no group to fall back on.
     */
    private static void checkEveryTeamHasAGroup(List<Team> teams, RouterConfig.Groups groups) {
        if (teams.isEmpty() && groups.withoutGroup().isEmpty()) {
            throw new ScenarioException("cluster.groups", "needs teams (each a key of cluster.groups.allow) or "
                    + "cluster.groups.withoutGroup: without either, every router would refuse every session");
        }
        for (Team team : teams) {
            if (!groups.allow().containsKey(team.name())) {
                throw new ScenarioException("teams." + team.name(), "is not a request group under cluster.groups.allow "
                        + new java.util.TreeSet<>(groups.allow().keySet()) + ": every router would refuse its "
                        + "sessions; add it there");
            }
        }
    }

    private static Clients clients(SpecNode c, long duration) {
        Loop loop = Loop.valueOf(c.oneOf("loop", "closed", List.of("closed", "open")).toUpperCase(java.util.Locale.ROOT));
        long initial = c.whole("initialSessions", -1, -1, 1_000_000);
        double rate = c.decimal("sessionsPerSecond", 0.05, 0, 10_000);
        boolean day = c.bool("dayCycle", false);
        double night = c.decimal("nightShare", 0.25, 0, 1);
        List<RateStep> profile = new ArrayList<>();
        long lastFrom = -1;
        for (SpecNode s : c.list("profile")) {
            RateStep step = new RateStep(s.millis("from", 0, 0, duration), s.decimal("sessionsPerSecond", 0, 0, 10_000));
            s.rejectUnknownKeys();
            if (step.fromMillis() <= lastFrom) {
                throw new ScenarioException(s.key("from"), "must increase from one step to the next");
            }
            lastFrom = step.fromMillis();
            profile.add(step);
        }
        List<Burst> bursts = new ArrayList<>();
        for (SpecNode b : c.list("bursts")) {
            bursts.add(new Burst(b.millis("at", 0, 0, duration), (int) b.whole("sessions", 100, 1, 1_000_000),
                    b.millis("over", 500, 1, duration), b.decimal("heavyShare", Double.NaN, 0, 1)));
            b.rejectUnknownKeys();
        }
        Spread lifetime = spread(c.section("lifetime"), 20 * 60_000, 1.0, 60_000, 8 * HOUR);
        long firstQuery = c.millis("firstQueryAfter", 3_000, 0, HOUR);
        Spread think = spread(c.section("think"), 15_000, 1.0, 500, HOUR);
        SpecNode in = c.section("intensity");
        Intensity intensity = new Intensity(in.decimal("alpha", 0, 0, 100), in.decimal("max", 20, 1, 1_000));
        if (intensity.alpha() > 0 && intensity.alpha() <= 1) {
            throw new ScenarioException(in.key("alpha"), "must be 0 (everyone equal) or above 1 (a finite mean), got "
                    + intensity.alpha());
        }
        in.rejectUnknownKeys();
        SpecNode h = c.section("heavy");
        Heavy heavy = new Heavy(h.decimal("share", 0, 0, 1), h.decimal("tasksScale", 4, 0.01, 1_000),
                h.decimal("taskTimeScale", 2, 0.01, 1_000), h.decimal("thinkScale", 0.5, 0.001, 1_000));
        h.rejectUnknownKeys();
        List<TaskWeight> tasks = new ArrayList<>();
        for (SpecNode t : c.list("tasks")) {
            tasks.add(new TaskWeight((int) t.whole("tasks", 1, 1, 1_000_000), t.decimal("weight", 1, 0, 1e9)));
            t.rejectUnknownKeys();
        }
        if (tasks.isEmpty()) {
            tasks.addAll(DEFAULT_TASKS);
        }
        if (tasks.stream().mapToDouble(TaskWeight::weight).sum() <= 0) {
            throw new ScenarioException(c.key("tasks"), "needs at least one positive weight");
        }
        Spread taskTime = spread(c.section("taskTime"), 300, 0.8, 10, 10 * 60_000);
        c.rejectUnknownKeys();
        return new Clients(loop, initial, rate, day, night, profile, bursts, lifetime, firstQuery, think, intensity,
                heavy, tasks, taskTime);
    }

    private static Spread spread(SpecNode s, double median, double sigma, long min, long max) {
        long lo = s.millis("min", min, 0, 30 * DAY);
        long hi = s.millis("max", max, 1, 30 * DAY);
        Spread out = new Spread(s.millis("median", Math.round(median), 1, 30 * DAY), s.decimal("sigma", sigma, 0, 5),
                lo, hi);
        if (lo > hi) {
            throw new ScenarioException(s.key("min"), "must not exceed " + s.key("max"));
        }
        s.rejectUnknownKeys();
        return out;
    }

    private static Cluster cluster(SpecNode c, long duration) {
        List<Long> slots = c.wholes("replicas", List.of(8L, 8L, 8L, 8L, 8L, 8L, 8L, 8L), 1, 100_000);
        if (slots.isEmpty()) {
            throw new ScenarioException(c.key("replicas"), "needs at least one replica (its task slots)");
        }
        int routers = (int) c.whole("routers", 1, 1, 64);
        long probe = c.millis("probeInterval", 1_000, 10, HOUR);
        long lag = c.millis("metricsLag", 100, 0, HOUR);
        long latency = c.millis("probeLatency", 20, 0, HOUR);
        long timeout = c.millis("probeTimeout", 1_000, 1, HOUR);
        long poll = c.millis("poolPoll", 1_000, 10, HOUR);
        long storeDelay = c.millis("storeDelay", 50, 0, HOUR);
        long ttl = c.millis("publishTtl", 10_000, 0, DAY);
        long stale = c.millis("staleAfter", Math.max(5_000, 3 * probe), 1, DAY);
        double alpha = c.decimal("ewmaAlpha", 0.5, 0.001, 1);
        long cap = c.whole("sessionCap", 50, 1, 1_000_000);
        long sustain = c.millis("sustain", io.scrouter.scorer.load.LoadBoard.DEFAULT_SUSTAIN_MILLIS, 1, DAY);
        long refreshEvery = c.millis("refreshEvery", 30_000, 1, DAY);
        long recentWindow = c.millis("recentWindow",
                io.scrouter.extproc.routing.SessionCounts.recentWindowFor(refreshEvery), 1, 30 * DAY);
        if (recentWindow < refreshEvery) {
            throw new ScenarioException(c.key("recentWindow"), "must not be shorter than " + c.key("refreshEvery")
                    + " (" + DurationText.format(refreshEvery) + "): sessions in use between two pushes would not "
                    + "count as recent, got " + DurationText.format(recentWindow));
        }
        List<Change> changes = new ArrayList<>();
        long last = -1;
        for (SpecNode ch : c.list("changes")) {
            List<Long> join = ch.wholes("join", List.of(), 1, 100_000);
            Change change = new Change(ch.millis("at", 0, 0, duration), (int) ch.whole("fail", 0, 0, 10_000),
                    (int) ch.whole("drain", 0, 0, 10_000), join.stream().map(Long::intValue).toList());
            ch.rejectUnknownKeys();
            if (change.atMillis() < last) {
                throw new ScenarioException(ch.key("at"), "must not be earlier than the change before it");
            }
            last = change.atMillis();
            changes.add(change);
        }
        List<String> replicaGroups = c.strings("replicaGroups", List.of());
        if (!replicaGroups.isEmpty() && replicaGroups.size() != slots.size()) {
            throw new ScenarioException(c.key("replicaGroups"), "names " + replicaGroups.size() + " groups for "
                    + slots.size() + " replicas: give one group per entry of " + c.key("replicas") + ", in order");
        }
        for (String g : replicaGroups) {
            if (!ReplicaAddress.isValidId(g)) {
                throw new ScenarioException(c.key("replicaGroups"), "group names " + ReplicaAddress.ID_RULE
                        + ", got '" + g + "'");
            }
        }
        JsonNode groupsTree = c.raw("groups");
        Optional<RouterConfig.Groups> groups = groupsTree == null ? Optional.empty()
                : Optional.of(GroupsConfig.read(c.key("groups"), groupsTree));
        c.rejectUnknownKeys();
        return new Cluster(slots.stream().map(Long::intValue).toList(), routers, probe, lag, latency, timeout, poll,
                storeDelay, ttl, stale, alpha, cap, sustain, refreshEvery, recentWindow, changes, replicaGroups,
                groups);
    }

    /** The spec as a tree that {@link #read} reads back to an equal spec (every key written out). */
    public ObjectNode toTree() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("name", name);
        root.put("summary", summary);
        root.put("duration", DurationText.format(durationMillis));
        root.put("warmup", DurationText.format(warmupMillis));
        root.put("snapshotAt", DurationText.format(snapshotAtMillis));
        clientsTree(root.putObject("clients"), clients);
        if (!teams.isEmpty()) {
            ObjectNode t = root.putObject("teams");
            teams.forEach(team -> clientsTree(t.putObject(team.name()), team.clients()));
        }
        clusterTree(root.putObject("cluster"));
        return root;
    }

    private static void clientsTree(ObjectNode c, Clients clients) {
        c.put("loop", clients.loop().name().toLowerCase(java.util.Locale.ROOT));
        c.put("initialSessions", clients.initialSessions());
        c.put("sessionsPerSecond", clients.sessionsPerSecond());
        c.put("dayCycle", clients.dayCycle());
        c.put("nightShare", clients.nightShare());
        ArrayNode profile = c.putArray("profile");
        clients.profile().forEach(s -> profile.addObject().put("from", DurationText.format(s.fromMillis()))
                .put("sessionsPerSecond", s.sessionsPerSecond()));
        ArrayNode bursts = c.putArray("bursts");
        clients.bursts().forEach(b -> {
            ObjectNode n = bursts.addObject().put("at", DurationText.format(b.atMillis()))
                    .put("sessions", b.sessions()).put("over", DurationText.format(b.overMillis()));
            if (!Double.isNaN(b.heavyShare())) {
                n.put("heavyShare", b.heavyShare());
            }
        });
        spreadTree(c.putObject("lifetime"), clients.lifetime());
        c.put("firstQueryAfter", DurationText.format(clients.firstQueryAfterMillis()));
        spreadTree(c.putObject("think"), clients.think());
        c.putObject("intensity").put("alpha", clients.intensity().alpha()).put("max", clients.intensity().max());
        Heavy h = clients.heavy();
        c.putObject("heavy").put("share", h.share()).put("tasksScale", h.tasksScale())
                .put("taskTimeScale", h.taskTimeScale()).put("thinkScale", h.thinkScale());
        ArrayNode tasks = c.putArray("tasks");
        clients.tasks().forEach(t -> tasks.addObject().put("tasks", t.tasks()).put("weight", t.weight()));
        spreadTree(c.putObject("taskTime"), clients.taskTime());
    }

    private void clusterTree(ObjectNode k) {
        ArrayNode replicas = k.putArray("replicas");
        cluster.replicas().forEach(replicas::add);
        k.put("routers", cluster.routers());
        k.put("probeInterval", DurationText.format(cluster.probeIntervalMillis()));
        k.put("metricsLag", DurationText.format(cluster.metricsLagMillis()));
        k.put("probeLatency", DurationText.format(cluster.probeLatencyMillis()));
        k.put("probeTimeout", DurationText.format(cluster.probeTimeoutMillis()));
        k.put("poolPoll", DurationText.format(cluster.poolPollMillis()));
        k.put("storeDelay", DurationText.format(cluster.storeDelayMillis()));
        k.put("publishTtl", DurationText.format(cluster.publishTtlMillis()));
        k.put("staleAfter", DurationText.format(cluster.staleAfterMillis()));
        k.put("ewmaAlpha", cluster.ewmaAlpha());
        k.put("sessionCap", cluster.sessionCap());
        k.put("sustain", DurationText.format(cluster.sustainMillis()));
        k.put("refreshEvery", DurationText.format(cluster.refreshEveryMillis()));
        k.put("recentWindow", DurationText.format(cluster.recentWindowMillis()));
        ArrayNode changes = k.putArray("changes");
        cluster.changes().forEach(ch -> {
            ObjectNode n = changes.addObject().put("at", DurationText.format(ch.atMillis()));
            if (ch.fail() > 0) {
                n.put("fail", ch.fail());
            }
            if (ch.drain() > 0) {
                n.put("drain", ch.drain());
            }
            if (!ch.join().isEmpty()) {
                ArrayNode j = n.putArray("join");
                ch.join().forEach(j::add);
            }
        });
        if (!cluster.replicaGroups().isEmpty()) {
            ArrayNode g = k.putArray("replicaGroups");
            cluster.replicaGroups().forEach(g::add);
        }
        cluster.groups().ifPresent(g -> k.set("groups", GroupsConfig.toTree(g)));
    }

    private static void spreadTree(ObjectNode n, Spread s) {
        n.put("median", DurationText.format(Math.round(s.medianMillis())));
        n.put("sigma", s.sigma());
        n.put("min", DurationText.format(s.minMillis()));
        n.put("max", DurationText.format(s.maxMillis()));
    }

    /**
     * The same scenario with its routers applying no groups (every session may go to every replica), to compare
     * against: same clients, teams, replicas and replica groups.
     */
    public ScenarioSpec withoutGroups() {
        Cluster c = cluster;
        return new ScenarioSpec(name, summary, durationMillis, warmupMillis, snapshotAtMillis, clients, teams,
                new Cluster(c.replicas(), c.routers(), c.probeIntervalMillis(), c.metricsLagMillis(),
                        c.probeLatencyMillis(), c.probeTimeoutMillis(), c.poolPollMillis(), c.storeDelayMillis(),
                        c.publishTtlMillis(), c.staleAfterMillis(), c.ewmaAlpha(), c.sessionCap(), c.sustainMillis(),
                        c.refreshEveryMillis(), c.recentWindowMillis(), c.changes(), c.replicaGroups(),
                        Optional.empty()));
    }

    /** The task slots of the largest replica at the start: the reference for a query's time alone. */
    public int referenceSlots() {
        return cluster.replicas().stream().mapToInt(Integer::intValue).max().orElse(1);
    }
}
