package io.scrouter.extproc.ops;

import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What every scrouter process exports besides its own metrics: {@code scrouter_build_info{version}} (so a
 * dashboard can tell which version each pod runs during a rollout) and the JVM and process series
 * ({@code jvm_*}, {@code process_*}) of the Prometheus Java client.
 */
public final class BuildInfo {

    /**
     * The version in the jar manifest ({@code Implementation-Version}); outside the runnable jar, the Maven project
     * version this class was built with; {@code unknown} outside a Maven build.
     */
    public static final String VERSION = readVersion();

    private BuildInfo() {
    }

    /** Registers the build info and the JVM and process metrics in {@code registry}. */
    public static void register(PrometheusRegistry registry) {
        Info.builder().name("scrouter_build_info").help("Version of the running scrouter build")
                .labelNames("version").register(registry).setLabelValues(VERSION);
        JvmMetrics.builder().register(registry);
    }

    private static String readVersion() {
        String fromManifest = BuildInfo.class.getPackage().getImplementationVersion();
        if (fromManifest != null) {
            return fromManifest;
        }
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            // An unfiltered copy (an IDE that skips Maven's resource filtering) must not export a placeholder.
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
