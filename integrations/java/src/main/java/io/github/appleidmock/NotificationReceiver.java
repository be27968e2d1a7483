package io.github.appleidmock;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;

/**
 * Takes Apple's server-to-server notifications and verifies each as a careful backend would:
 * RS256 under a key /auth/keys publishes (fetched again for an unknown kid), iss the mock's
 * issuer, aud a client of the scenario, iat not after the mock's clock, and an events claim (a
 * JSON string, as Apple sends it, or an object) with a type. It answers 200, or 400 with the
 * reason (the mock's delivery log then shows the attempt and retries it).
 */
public final class NotificationReceiver implements AutoCloseable {
    public static final String PATH = "/apple/notifications";
    private static final int MAX_BODY_BYTES = 1 << 20;

    private record Received(Notification notification, String error) {}

    private final HttpServer server;
    private final String url;
    private final List<Received> records = new ArrayList<>();
    private int next;
    private Map<String, Map<String, Object>> keys = Map.of();
    private AppleIDMock mock;

    /** Listening on 127.0.0.1 and a free port. */
    public NotificationReceiver() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        } catch (IOException e) {
            throw new AppleIDMockError("the notification receiver cannot listen: " + e.getMessage());
        }
        server.createContext("/", this::serve);
        // A few threads: one POST that stalls its body holds one, not every later notification.
        server.setExecutor(Executors.newFixedThreadPool(4, runnable -> {
            Thread thread = new Thread(runnable, "appleid-mock notifications");
            thread.setDaemon(true);
            return thread;
        }));
        // The server's dispatcher thread takes the daemon status of the thread that starts it: a
        // receiver nobody closed must not keep the JVM alive.
        Thread starter = new Thread(server::start, "appleid-mock notifications start");
        starter.setDaemon(true);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        url = "http://127.0.0.1:" + server.getAddress().getPort() + PATH;
    }

    /** The notification_url to give a scenario's team. */
    public String url() {
        return url;
    }

    /** Verify against mock (its keys, issuer, clock and scenario) from now on. */
    public synchronized void attach(AppleIDMock mock) {
        this.mock = mock;
    }

    /** How many notifications (verified or not) arrived so far. */
    public synchronized int received() {
        return records.size();
    }

    /** Forgets the notifications not yet taken by next(). */
    public synchronized void skipPending() {
        next = records.size();
    }

    /** The next notification, waiting up to timeout; one that failed verification throws, saying why. */
    public synchronized Notification next(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (next >= records.size()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AppleIDMockError("no notification arrived at " + url + " within " + timeout.toMillis()
                        + " ms (the mock's delivery log, GET /__mock/notifications, says where it went)");
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AppleIDMockError("interrupted while waiting for a notification");
            }
        }
        Received record = records.get(next++);
        if (record.error() != null) throw new AppleIDMockError("a notification failed verification: " + record.error());
        return record.notification();
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                answer(exchange, 405, Map.of("error", exchange.getRequestMethod() + " is not POST"));
                return;
            }
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readNBytes(MAX_BODY_BYTES + 1);
            }
            Received record;
            if (body.length > MAX_BODY_BYTES) {
                record = new Received(null, "the body is over " + MAX_BODY_BYTES + " bytes");
            } else {
                try {
                    record = new Received(verify(new String(body, StandardCharsets.UTF_8)), null);
                } catch (IllegalArgumentException | AppleIDMockError e) {
                    record = new Received(null, e.getMessage());
                }
            }
            synchronized (this) {
                records.add(record);
                notifyAll();
            }
            answer(exchange, record.error() == null ? 200 : 400, record.error() == null ? Map.of("ok", true) : Map.of("error", record.error()));
        }
    }

    private static void answer(HttpExchange exchange, int status, Map<String, Object> body) throws IOException {
        byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @SuppressWarnings("unchecked")
    private Notification verify(String body) {
        Object envelope;
        try {
            envelope = Json.parse(body);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the body is not JSON");
        }
        if (!(envelope instanceof Map<?, ?> map) || !(map.get("payload") instanceof String token)) {
            throw new IllegalArgumentException("the body has no payload string");
        }
        AppleIDMock against;
        synchronized (this) {
            against = mock;
        }
        if (against == null) throw new IllegalArgumentException("no mock attached to verify against");
        Jose.Verified verified = Jose.verifyRS256(token, kid -> key(against, kid));
        Map<String, Object> claims = verified.claims();
        Object issuer = against.health().get("issuer");
        if (!Objects.equals(claims.get("iss"), issuer)) {
            throw new IllegalArgumentException("iss is " + Jose.quoted(claims.get("iss")) + ", not " + Jose.quoted(issuer));
        }
        Set<Object> clients = new HashSet<>();
        for (Map<String, Object> team : against.teams()) for (Map<String, Object> client : AppleIDMock.clientsOf(team)) clients.add(client.get("client_id"));
        if (!clients.isEmpty() && !clients.contains(claims.get("aud"))) {
            throw new IllegalArgumentException("aud " + Jose.quoted(claims.get("aud")) + " is none of the scenario's clients");
        }
        long epoch = ((Number) against.object("GET", "/__mock/clock", null, null).get("epoch")).longValue();
        if (!(claims.get("iat") instanceof Long iat) || iat > epoch + 60) {
            throw new IllegalArgumentException("iat " + claims.get("iat") + " is after the mock's clock (" + epoch + ")");
        }
        Object events = claims.get("events");
        if (events instanceof String text) {
            try {
                events = Json.parse(text);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("the events claim is a string that is not JSON");
            }
        }
        if (!(events instanceof Map<?, ?> e) || !(e.get("type") instanceof String type)) {
            throw new IllegalArgumentException("the events claim " + claims.get("events") + " has no type");
        }
        Map<String, Object> eventsMap = (Map<String, Object>) e;
        return new Notification(type, eventsMap.get("sub") instanceof String sub ? sub : null, eventsMap, claims, verified.kid(), token);
    }

    private Map<String, Object> key(AppleIDMock against, String kid) {
        Map<String, Map<String, Object>> known;
        synchronized (this) {
            known = keys;
        }
        if (!known.containsKey(kid)) {
            known = against.publishedKeys();
            synchronized (this) {
                keys = known;
            }
        }
        Map<String, Object> jwk = known.get(kid);
        if (jwk == null) throw new IllegalArgumentException("kid " + Json.write(kid) + " is not published at /auth/keys");
        return jwk;
    }
}
