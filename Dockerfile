# Container image of the scrouter ext_proc service; istio/deployment.yaml runs it.
#
#   mvn -B -pl extproc -am package -DskipTests
#   docker build -t scrouter/extproc:0.1.0 .
#
# Push it to a registry your cluster can pull from and point the Deployment at it, e.g.
#   (cd istio && kustomize edit set image scrouter/extproc=<registry>/scrouter/extproc:0.1.0)
FROM eclipse-temurin:17-jre

RUN groupadd --system --gid 10001 scrouter \
 && useradd --system --uid 10001 --gid scrouter --no-create-home --shell /usr/sbin/nologin scrouter

COPY extproc/target/extproc-0.1.0-SNAPSHOT-all.jar /opt/scrouter/extproc.jar

# Numeric, so Kubernetes can check runAsNonRoot without reading /etc/passwd.
USER 10001:10001
EXPOSE 9002

# Size the heap from the container's memory limit; exit on OOM so Kubernetes restarts the pod
# instead of leaving a half-working JVM on the request path.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/scrouter/extproc.jar"]
CMD ["--config", "/etc/scrouter/scrouter.yaml"]
