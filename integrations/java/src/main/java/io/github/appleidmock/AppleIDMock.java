package io.github.appleidmock;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;
import javax.net.ssl.SSLHandshakeException;

/**
 * A running appleid-mock, driven through its control API ({@code /__mock/…}). {@link #start}
 * runs one (close it, or let the JVM's exit stop it); {@link #attach} drives one something else
 * runs (the GitHub Action, compose, a container). Every refusal is an {@link AppleIDMockError}
 * carrying the mock's reason and the field at fault.
 */
public class AppleIDMock implements AutoCloseable {
    /** The built-in scenario's team and developer key (the committed test-only AuthKey_MOCKKEY001.p8). */
    public static final String BUILT_IN_TEAM = "MOCKTEAM01";
    public static final String BUILT_IN_KEY_ID = "MOCKKEY001";
    /** Apple's limit on a client_secret's lifetime (exp - iat): six months. */
    public static final Duration MAX_SECRET_LIFETIME = Duration.ofSeconds(15777000);
    private static final String APPLE_AUDIENCE = "https://appleid.apple.com";
    // The most of an answer the kit reads (the mock's biggest, a page of the journal, is far less).
    private static final int MAX_ANSWER_BYTES = 64 << 20;

    private final String url;
    private final Map<String, Object> scenario;
    private final HttpClient client;
    private final String controlToken;
    private final Duration timeout;
    final MockProcess process;
    private final NotificationReceiver notifications;

    AppleIDMock(String url, Options options, Map<String, Object> scenario, MockProcess process, NotificationReceiver notifications) {
        if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
            throw new AppleIDMockError("the mock's url " + Jose.quoted(url) + " is not an http:// or https:// URL");
        }
        this.url = url.replaceAll("/+$", "");
        this.scenario = scenario;
        this.controlToken = options.controlToken;
        this.timeout = options.timeout;
        this.process = process;
        this.notifications = notifications;
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(options.timeout).followRedirects(HttpClient.Redirect.NEVER)
                .proxy(java.net.ProxySelector.of(null));
        if (options.ca != null) builder.sslContext(TrustedCa.context(options.ca));
        this.client = builder.build();
    }

    /** Runs {@code appleid-mock serve --port 0} and answers it once healthy. */
    public static AppleIDMock start(Options options) {
        return MockProcess.start(options);
    }

    /** {@link #start(Options)} with the defaults: the built-in scenario, a notification receiver. */
    public static AppleIDMock start() {
        return start(options());
    }

    /** A mock something else runs at {@code url}, once healthy; closing it does nothing. */
    public static AppleIDMock attach(String url, Options options) {
        AppleIDMock mock = new AppleIDMock(url, options, options.scenarioObject(), null, null);
        mock.waitUntilHealthy(options.timeout, null);
        return mock;
    }

    public static AppleIDMock attach(String url) {
        return attach(url, options());
    }

    /** Start's and attach's choices, builder style. */
    public static Options options() {
        return new Options();
    }

    /** Where it answers: your backend's Apple base URL. */
    public String url() {
        return url;
    }

    /** The scenario it serves, when known (the defaults of clientSecret and authorizeWeb). */
    public Map<String, Object> scenario() {
        return scenario;
    }

    /** The verified notifications (null for an attached mock, or one started without a receiver). */
    public NotificationReceiver notifications() {
        return notifications;
    }

    /** The process id of a mock start() ran, or -1. */
    public long pid() {
        return process == null ? -1 : process.pid();
    }

    // ---- Apple's side of a sign-in ----

    /**
     * A native (iOS) sign-in: what ASAuthorizationAppleIDCredential hands the app (user,
     * identityToken, authorizationCode, the first time email and fullName).
     */
    public Map<String, Object> signIn(String user, String clientId) {
        return signIn(user, clientId, Map.of());
    }

    /** signIn with fields: nonce, scopes, hide_email, defect. */
    public Map<String, Object> signIn(String user, String clientId, Map<String, ?> fields) {
        Map<String, Object> body = new LinkedHashMap<>(fields);
        body.put("user", user);
        body.put("client_id", clientId);
        return object("POST", "/__mock/sign-in", body, null);
    }

    /**
     * The web flow without a browser (POST /__mock/authorize): how Apple would deliver the result
     * to the redirect URI ({method, url, form}, or for web_message {message, method,
     * target_origin}). parameters: client_id and redirect_uri (default the scenario's first
     * Services ID and its first redirect URI), state, nonce, response_mode, scope,
     * code_challenge, …, and the user's choices (hide_email, cancel, defect).
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> authorizeWeb(String user, Map<String, ?> parameters) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("response_type", "code");
        body.putAll(parameters);
        if (!body.containsKey("client_id")) {
            Map<String, Object> services = servicesClient();
            if (services == null) throw new AppleIDMockError("authorizeWeb: the scenario has no Services ID; pass client_id and redirect_uri");
            body.put("client_id", services.get("client_id"));
            List<Object> uris = (List<Object>) services.getOrDefault("redirect_uris", List.of());
            if (!body.containsKey("redirect_uri") && !uris.isEmpty()) body.put("redirect_uri", uris.get(0));
        }
        body.put("user", user);
        return object("POST", "/__mock/authorize", body, null);
    }

    /** The ES256 client_secret for clientId, signed by the team's developer key, valid an hour. */
    public String clientSecret(String clientId) {
        return clientSecret(clientId, new SecretOptions());
    }

    /** The ES256 client_secret for clientId (raw R‖S, as JWS wants). */
    @SuppressWarnings("unchecked")
    public String clientSecret(String clientId, SecretOptions options) {
        Map<String, Object> team = teamOf(options.teamId, clientId);
        String teamId = options.teamId != null ? options.teamId : team != null ? (String) team.get("team_id") : BUILT_IN_TEAM;
        String keyId = options.keyId;
        if (keyId == null) {
            List<Object> keys = team == null ? List.of() : (List<Object>) team.getOrDefault("developer_keys", List.of());
            keyId = keys.isEmpty() ? BUILT_IN_KEY_ID : (String) ((Map<String, Object>) keys.get(0)).get("key_id");
        }
        String pem;
        String named;
        if (options.key == null) {
            if (!BUILT_IN_KEY_ID.equals(keyId)) {
                throw new AppleIDMockError("clientSecret: key " + keyId + " of team " + teamId
                        + " is not the built-in test key; pass key(…) (the path of its .p8, or its PEM)");
            }
            pem = builtInKey();
            named = BUILT_IN_KEY_ID;
        } else if (options.key.contains("-----BEGIN")) {
            pem = options.key;
            named = "the key given";
        } else {
            try {
                pem = Files.readString(Path.of(options.key));
            } catch (IOException e) {
                throw new AppleIDMockError("clientSecret: key " + options.key + ": " + e);
            }
            named = "key " + options.key;
        }
        if (options.lifetime.compareTo(Duration.ofSeconds(1)) < 0 || options.lifetime.compareTo(MAX_SECRET_LIFETIME) > 0) {
            throw new AppleIDMockError("clientSecret: lifetime " + options.lifetime.getSeconds() + " s is outside 1…"
                    + MAX_SECRET_LIFETIME.getSeconds() + " s (Apple's six months)");
        }
        PrivateKey key;
        try {
            key = Jose.p256PrivateKey(pem);
        } catch (IllegalArgumentException e) {
            throw new AppleIDMockError("clientSecret: " + named + ": " + e.getMessage());
        }
        long iat = (options.issuedAt == null ? Instant.now() : options.issuedAt).getEpochSecond();
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("alg", "ES256");
        header.put("kid", keyId);
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", teamId);
        claims.put("iat", iat);
        claims.put("exp", iat + options.lifetime.getSeconds());
        claims.put("aud", APPLE_AUDIENCE);
        claims.put("sub", clientId);
        return Jose.es256(header, claims, key);
    }

    /** The committed test-only developer key of the built-in scenario (Keys/AuthKey_MOCKKEY001.p8). */
    public static String builtInKey() {
        try (InputStream in = AppleIDMock.class.getResourceAsStream("AuthKey_MOCKKEY001.p8")) {
            return new String(Objects.requireNonNull(in, "AuthKey_MOCKKEY001.p8 is not on the class path").readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new AppleIDMockError("the built-in key: " + e);
        }
    }

    /**
     * Checks an id_token as a backend should: RS256 under a key /auth/keys publishes, iss the
     * mock's issuer, aud clientId, exp after the mock's clock. Answers its claims.
     */
    public Map<String, Object> verifyIdToken(String token, String clientId) {
        Jose.Verified verified;
        try {
            verified = Jose.verifyRS256(token, kid -> {
                Map<String, Object> jwk = publishedKeys().get(kid);
                if (jwk == null) throw new IllegalArgumentException("kid " + Json.write(kid) + " is not published at /auth/keys");
                return jwk;
            });
        } catch (IllegalArgumentException e) {
            throw new AppleIDMockError("the id_token does not verify: " + e.getMessage());
        }
        Map<String, Object> claims = verified.claims();
        Object issuer = health().get("issuer");
        long epoch = ((Number) object("GET", "/__mock/clock", null, null).get("epoch")).longValue();
        String wrong = null;
        if (!Objects.equals(claims.get("iss"), issuer)) wrong = "iss is " + Jose.quoted(claims.get("iss")) + ", not " + Jose.quoted(issuer);
        else if (!Objects.equals(claims.get("aud"), clientId)) wrong = "aud is " + Jose.quoted(claims.get("aud")) + ", not " + Jose.quoted(clientId);
        else if (!(claims.get("exp") instanceof Number exp) || exp.longValue() <= epoch) wrong = "exp " + claims.get("exp") + " is not after the mock's clock (" + epoch + ")";
        if (wrong != null) throw new AppleIDMockError("the id_token does not verify: " + wrong);
        return claims;
    }

    /**
     * A forged id_token for user, genuine or with one defect (expired, wrong-audience, alg-none,
     * …), changing nothing in the mock; fields kind "notification" and type for a signed
     * notification. The whole answer.
     */
    public Map<String, Object> token(String user, String clientId, Map<String, ?> fields) {
        Map<String, Object> body = new LinkedHashMap<>(fields);
        body.put("user", user);
        body.put("client_id", clientId);
        return object("POST", "/__mock/tokens", body, null);
    }

    // ---- the world around it ----

    /** Moves the mock clock on by seconds; answers the clock. */
    public Map<String, Object> advanceClock(long seconds) {
        return object("POST", "/__mock/clock", Map.of("advance", seconds), null);
    }

    /** One step of Apple's key rotation: a fresh key signs, the previous ones stay published. */
    public Map<String, Object> rotateKeys() {
        return object("POST", "/__mock/keys/rotate", Map.of(), null);
    }

    /** A user's action at Apple (consent-revoked, account-delete, email-disabled, email-enabled). */
    public Map<String, Object> fireEvent(String type, String user, String clientId) {
        return object("POST", "/__mock/events", Map.of("type", type, "user", user, "client_id", clientId), null);
    }

    /** The user changed their password: refresh tokens answer invalid_grant, no notification. */
    public Map<String, Object> changePassword(String user) {
        return object("POST", "/__mock/events", Map.of("type", "password-changed", "user", user), null);
    }

    /** Back to the scenario's start: users, consents, codes, transfers, keys and clock. */
    public void reset() {
        object("POST", "/__mock/reset", Map.of(), null);
    }

    /** {active_kid, issuer, status}. */
    public Map<String, Object> health() {
        return object("GET", "/__mock/health", null, null);
    }

    /** Installs one fault (a scenario faults entry: {path, times, action, status, …}). */
    public Map<String, Object> addFault(Map<String, ?> fault) {
        return object("POST", "/__mock/faults", fault, null);
    }

    /** One of Apple's own incidents, for minutes of mock time when minutes > 0. */
    public Map<String, Object> incident(String name, int minutes) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("incident", name);
        if (minutes > 0) body.put("minutes", minutes);
        return object("POST", "/__mock/faults", body, null);
    }

    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> faults() {
        return (List<Map<String, Object>>) object("GET", "/__mock/faults", null, null).get("faults");
    }

    /** Removes every fault (incident null), or every fault of incident; answers how many there were. */
    public long clearFaults(String incident) {
        return ((Number) object("DELETE", "/__mock/faults", null, incident == null ? null : Map.of("incident", incident)).get("removed")).longValue();
    }

    // ---- reading what went wrong ----

    /** The request journal, oldest first, with the reason for each refusal (filters as in docs/control-api.md). */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> requests(Map<String, String> filters) {
        return (List<Map<String, Object>>) object("GET", "/__mock/requests", null, filters).get("requests");
    }

    /** The id of the newest journal entry (0 with the journal off): later entries come after it. */
    public long journalMark() {
        try {
            Object newest = object("GET", "/__mock/requests", null, Map.of("limit", "1", "after", "0", "control", "false")).get("newest");
            return newest instanceof Number n ? n.longValue() : 0;
        } catch (AppleIDMockError e) {
            return 0;
        }
    }

    /** The requests to Apple's routes refused after journal id after, each with the mock's reason. */
    public List<String> refusals(long after) {
        List<Map<String, Object>> entries;
        try {
            entries = requests(Map.of("after", Long.toString(after), "control", "false", "status", "4xx", "limit", "1000"));
        } catch (AppleIDMockError e) {
            return List.of("(the journal is unavailable: " + e.getMessage() + ")");
        }
        List<String> lines = new ArrayList<>();
        for (Map<String, Object> e : entries) {
            StringJoiner line = new StringJoiner(" ");
            line.add(String.valueOf(e.get("method"))).add(String.valueOf(e.get("path"))).add(String.valueOf(e.get("status")));
            if (e.get("error") != null) line.add(String.valueOf(e.get("error")));
            lines.add(line + " — " + (e.get("reason") == null ? "no reason given" : e.get("reason")));
        }
        return lines;
    }

    /** What the mock wrote to stderr so far, for a mock start() ran. */
    public List<String> logs() {
        return process == null ? List.of() : process.logs();
    }

    /** Stops a mock start() ran (SIGTERM; SIGKILL after 20 s) and answers its exit status; 0 for an attached one. */
    public int stop() {
        return process == null ? 0 : process.stop(Duration.ofSeconds(20));
    }

    @Override
    public void close() {
        stop();
    }

    // ---- plumbing ----

    /**
     * One control or Apple request (body as JSON when not null): the answer's JSON, or an
     * AppleIDMockError naming what the mock said (its error and field).
     */
    public Object call(String method, String path, Object body, Map<String, String> query) {
        StringBuilder target = new StringBuilder(url).append(path);
        if (query != null && !query.isEmpty()) {
            StringJoiner q = new StringJoiner("&", "?", "");
            query.forEach((name, value) -> q.add(URLEncoder.encode(name, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8)));
            target.append(q);
        }
        Duration wait = timeout;
        if (query != null && query.containsKey("wait")) {
            try {
                wait = wait.plusSeconds(Long.parseLong(query.get("wait")));
            } catch (NumberFormatException ignored) {
                // the mock refuses it, naming the field
            }
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target.toString())).timeout(wait).header("Accept", "application/json");
        if (controlToken != null) request.header("Authorization", "Bearer " + controlToken);
        if (body != null) {
            request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(Json.write(body)));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<InputStream> answer;
        byte[] bytes;
        try {
            answer = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = answer.body()) {
                bytes = in.readNBytes(MAX_ANSWER_BYTES + 1);
            }
        } catch (IOException e) {
            throw new AppleIDMockError(method + " " + target + ": " + describe(e), 0, null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AppleIDMockError(method + " " + target + ": interrupted", 0, null, e);
        }
        if (bytes.length > MAX_ANSWER_BYTES) throw new AppleIDMockError(method + " " + path + ": the answer is over " + MAX_ANSWER_BYTES + " bytes");
        String text = new String(bytes, StandardCharsets.UTF_8);
        Object json;
        try {
            json = text.isEmpty() ? Map.of() : Json.parse(text);
        } catch (IllegalArgumentException e) {
            json = null;
        }
        int status = answer.statusCode();
        if (status >= 200 && status < 300) {
            if (json == null) throw new AppleIDMockError(method + " " + path + " answered " + status + " with no JSON: " + clip(text), status, text, null);
            return json;
        }
        String said = clip(text);
        if (json instanceof Map<?, ?> map && map.containsKey("error")) {
            said = String.valueOf(map.get("error")) + (map.get("field") != null ? " (field " + map.get("field") + ")" : "");
        }
        throw new AppleIDMockError(method + " " + path + " answered " + status + ": " + said, status, json != null ? json : text, null);
    }

    private static String clip(String text) {
        return text.length() > 500 ? text.substring(0, 500) : text;
    }

    private static String describe(IOException e) {
        if (e instanceof ConnectException) return "connection refused";
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> object(String method, String path, Object body, Map<String, String> query) {
        Object answer = call(method, path, body, query);
        if (!(answer instanceof Map)) throw new AppleIDMockError(method + " " + path + " answered JSON that is not an object");
        return (Map<String, Object>) answer;
    }

    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> publishedKeys() {
        Map<String, Map<String, Object>> keys = new LinkedHashMap<>();
        for (Object key : (List<Object>) object("GET", "/auth/keys", null, null).get("keys")) {
            Map<String, Object> jwk = (Map<String, Object>) key;
            keys.put(String.valueOf(jwk.get("kid")), jwk);
        }
        return keys;
    }

    /**
     * Asks /__mock/health every 50 ms until it answers, for at most timeout. alive, when not
     * null, runs in between and its error ends the wait; so does a certificate the JDK does not
     * trust (an https mock without its CA never becomes healthy).
     */
    void waitUntilHealthy(Duration timeout, Runnable alive) {
        Instant deadline = Instant.now().plus(timeout);
        for (;;) {
            AppleIDMockError last;
            try {
                health();
                return;
            } catch (AppleIDMockError e) {
                last = e;
            }
            if (last.getCause() instanceof SSLHandshakeException untrusted) {
                throw new AppleIDMockError(url + " serves a certificate the JDK does not trust (" + untrusted.getMessage()
                        + "): give the kit its CA (options().ca(…), e.g. the cert.pem of `appleid-mock tls generate`)");
            }
            if (alive != null) alive.run();
            if (Instant.now().isAfter(deadline)) {
                throw new AppleIDMockError(url + " did not answer /__mock/health within " + timeout.toMillis() + " ms: " + last.getMessage());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AppleIDMockError("interrupted while waiting for " + url);
            }
        }
    }

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> teams() {
        List<Map<String, Object>> teams = new ArrayList<>();
        if (scenario != null && scenario.get("teams") instanceof List<?> list) {
            for (Object team : list) if (team instanceof Map) teams.add((Map<String, Object>) team);
        }
        return teams;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> clientsOf(Map<String, Object> team) {
        List<Map<String, Object>> clients = new ArrayList<>();
        if (team.get("clients") instanceof List<?> list) {
            for (Object client : list) if (client instanceof Map) clients.add((Map<String, Object>) client);
        }
        return clients;
    }

    private Map<String, Object> teamOf(String teamId, String clientId) {
        List<Map<String, Object>> teams = teams();
        for (Map<String, Object> team : teams) {
            if (teamId != null && teamId.equals(team.get("team_id"))) return team;
            if (teamId == null && clientId != null && clientsOf(team).stream().anyMatch(c -> clientId.equals(c.get("client_id")))) return team;
        }
        return teamId == null && !teams.isEmpty() ? teams.get(0) : null;
    }

    private Map<String, Object> servicesClient() {
        for (Map<String, Object> team : teams()) {
            for (Map<String, Object> client : clientsOf(team)) if ("services_id".equals(client.get("type"))) return client;
        }
        return null;
    }

    /** clientSecret's choices: the team's first developer key, the built-in test key, an hour from now. */
    public static final class SecretOptions {
        String teamId;
        String keyId;
        String key;
        Duration lifetime = Duration.ofHours(1);
        Instant issuedAt;

        public SecretOptions teamId(String teamId) { this.teamId = teamId; return this; }
        public SecretOptions keyId(String keyId) { this.keyId = keyId; return this; }
        /** A .p8 path or its PEM text. */
        public SecretOptions key(String key) { this.key = key; return this; }
        public SecretOptions lifetime(Duration lifetime) { this.lifetime = lifetime; return this; }
        public SecretOptions issuedAt(Instant issuedAt) { this.issuedAt = issuedAt; return this; }
    }
}
