package io.scrouter.extproc.routing;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Only Spark Connect RPCs are routed; every other path is refused before a session is looked at. */
class SparkRpcTest {

    @ParameterizedTest
    @ValueSource(strings = {"ExecutePlan", "AnalyzePlan", "Config", "AddArtifacts", "ArtifactStatus", "Interrupt",
            "ReattachExecute", "ReleaseExecute", "ReleaseSession", "FetchErrorDetails", "CloneSession", "GetStatus",
            // An RPC a newer client may add: it must still reach the session's replica.
            "SomeFutureRpc_V2"})
    void sparkConnectMethodsAreRecognised(String method) {
        assertThat(SparkRpc.method("/spark.connect.SparkConnectService/" + method)).contains(method);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "/spark.connect.SparkConnectService/",                  // empty method
            "/spark.connect.SparkConnectService",
            "/spark.connect.OtherService/ExecutePlan",              // another service
            "/grpc.health.v1.Health/Check",
            "/envoy.service.ext_proc.v3.ExternalProcessor/Process",
            "spark.connect.SparkConnectService/ExecutePlan",        // not absolute
            "//spark.connect.SparkConnectService/ExecutePlan",
            "/SPARK.CONNECT.SPARKCONNECTSERVICE/ExecutePlan",
            "/spark.connect.SparkConnectService/ExecutePlan?x=1",   // query string
            "/spark.connect.SparkConnectService/ExecutePlan#frag",
            "/spark.connect.SparkConnectService/../x",              // traversal
            "/spark.connect.SparkConnectService/../../admin",
            "/spark.connect.SparkConnectService/Execute/Plan",
            "/spark.connect.SparkConnectService/ExecutePlan/",
            "/spark.connect.SparkConnectService/%45xecutePlan",     // percent-encoding
            "/spark.connect.SparkConnectService/Execute Plan",
            "/spark.connect.SparkConnectService/ExecutePlan\r\n",
            "/spark.connect.SparkConnectService/1ExecutePlan",      // must start with a letter
            "/spark.connect.SparkConnectService/_ExecutePlan",
            "/spark.connect.SparkConnectService/ÉxecutePlan",
            "/",
    })
    void otherPathsAreRejected(String path) {
        assertThat(SparkRpc.method(path)).isEmpty();
    }

    @ParameterizedTest
    @NullAndEmptySource
    void nullAndEmptyPathsAreRejected(String path) {
        assertThat(SparkRpc.method(path)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 65, 10_000})
    void methodNameLengthIsBounded(int length) {
        String method = "E" + "x".repeat(length - 1);
        assertThat(SparkRpc.method(SparkRpc.SERVICE_PREFIX + method).isPresent()).isEqualTo(length <= 64);
    }
}
