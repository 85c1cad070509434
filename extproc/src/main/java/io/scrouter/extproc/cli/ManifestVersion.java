package io.scrouter.extproc.cli;

import io.scrouter.extproc.ops.BuildInfo;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the version in the jar manifest (what {@code scrouter_build_info} exports too). */
public final class ManifestVersion implements IVersionProvider {

    @Override
    public String[] getVersion() {
        return new String[] {"scrouter " + BuildInfo.VERSION,
                "Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ")"};
    }
}
