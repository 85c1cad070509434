package io.scrouter.extproc.ops;

import io.netty.handler.codec.http.HttpHeaders;
import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.scrouter.extproc.ops.OpsHttpServer.Answer;
import io.scrouter.extproc.ops.OpsHttpServer.Request;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Prometheus page ({@code /metrics}) as the Prometheus client's scrape handler writes it: the exposition format
 * the scraper asks for ({@code Accept}), gzip when it accepts it, and {@code name[]} filters. {@code /-/healthy}
 * answers as the client's own HTTP server does, for probes written against it.
 */
final class MetricsPage implements OpsHttpServer.Handler {

    private final PrometheusScrapeHandler scrape;

    MetricsPage(PrometheusRegistry registry) {
        this.scrape = new PrometheusScrapeHandler(registry);
    }

    @Override
    public Answer handle(Request request) throws IOException {
        return switch (request.path()) {
            case "/metrics" -> scrape(request);
            case "/-/healthy" -> Answer.of(200, "text/plain; charset=utf-8", "Exporter is healthy.\n");
            case "/" -> Answer.of(200, "text/plain; charset=utf-8", "Prometheus metrics at /metrics\n");
            default -> Answer.of(404, "text/plain; charset=utf-8", "not found; the metrics are at /metrics\n");
        };
    }

    private Answer scrape(Request request) throws IOException {
        Exchange exchange = new Exchange(request);
        scrape.handleRequest(exchange);
        if (exchange.status < 0) {
            return Answer.of(500, "text/plain; charset=utf-8", "the scrape wrote no answer\n");
        }
        return new Answer(exchange.status, exchange.headers, exchange.body.toByteArray());
    }

    /** One scrape, buffered: the handler writes the whole page before the server sends it. */
    private static final class Exchange implements PrometheusHttpExchange, PrometheusHttpRequest,
            PrometheusHttpResponse {
        private final Request request;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private int status = -1;

        Exchange(Request request) {
            this.request = request;
        }

        @Override
        public PrometheusHttpRequest getRequest() {
            return this;
        }

        @Override
        public PrometheusHttpResponse getResponse() {
            return this;
        }

        @Override
        public void handleException(IOException e) throws IOException {
            throw e;
        }

        @Override
        public void handleException(RuntimeException e) {
            throw e;
        }

        @Override
        public void close() {
        }

        @Override
        public String getQueryString() {
            return request.query();
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            HttpHeaders h = request.headers();
            return Collections.enumeration(h.getAll(name));
        }

        @Override
        public String getMethod() {
            return request.method();
        }

        @Override
        public String getRequestPath() {
            return request.path();
        }

        @Override
        public void setHeader(String name, String value) {
            headers.put(name, value);
        }

        @Override
        public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
            status = statusCode;
            return body;
        }
    }
}
