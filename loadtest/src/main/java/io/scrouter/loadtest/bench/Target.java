package io.scrouter.loadtest.bench;

/** What a round measures: the no-op baseline or the router with one of its two stores. */
enum Target {
    NOOP("no-op"),
    ROUTER_REDIS("router, Redis store"),
    ROUTER_EMBEDDED("router, embedded store");

    private final String title;

    Target(String title) {
        this.title = title;
    }

    String title() {
        return title;
    }
}
