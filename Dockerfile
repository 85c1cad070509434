# Container image of the scrouter ext_proc service, for machines with a Docker engine; istio/ runs it.
# Without Docker, `mvn -Pimage package` builds the same image as an OCI tarball with Jib (extproc/pom.xml).
#
#   mvn -B -s .mvn/settings.xml -pl extproc -am -Pimage package -DskipTests
#   docker build -t scrouter/extproc:0.1.0 .
#
# Push it to a registry your cluster can pull from and set `image` in your overlay's parameters.yaml
# (istio/overlays/example/).
FROM eclipse-temurin:17-jre

LABEL org.opencontainers.image.title="scrouter-extproc" \
      org.opencontainers.image.description="Envoy ext_proc service that pins Spark Connect sessions to replicas and places new ones by load" \
      org.opencontainers.image.version="0.1.0-SNAPSHOT"

RUN groupadd --system --gid 10001 scrouter \
 && useradd --system --uid 10001 --gid scrouter --no-create-home --shell /usr/sbin/nologin scrouter

# Dependencies first, in a layer of their own: they change rarely, so a code change ships only the small
# application jar below instead of a 57 MB fat jar.
COPY extproc/target/image/libs/ /opt/scrouter/libs/
COPY extproc/target/extproc-0.1.0-SNAPSHOT.jar /opt/scrouter/extproc.jar

# Numeric, so Kubernetes can check runAsNonRoot without reading /etc/passwd.
USER 10001:10001
EXPOSE 9002 9090

# Heap and direct memory are sized in JAVA_TOOL_OPTIONS, which a Deployment can override (a flag on the
# command line would win over it). Exit on OOM so Kubernetes restarts the pod instead of leaving a
# half-working JVM on the request path. The heap starts at its full size, so the young generation is not
# held small (istio/base/deployment.yaml says why).
ENV JAVA_TOOL_OPTIONS="-XX:InitialRAMPercentage=50 -XX:MaxRAMPercentage=50 -XX:MaxDirectMemorySize=256m"
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-cp", "/opt/scrouter/extproc.jar:/opt/scrouter/libs/*", "io.scrouter.extproc.Main"]
CMD ["--config", "/etc/scrouter/scrouter.yaml"]
