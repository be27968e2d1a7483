package com.example.backend;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A backend's Sign in with Apple callback, as a team adopting the kit has one: it takes Apple's
 * form_post, redeems the code at apple + "/auth/token" (with the redirect_uri the web flow used, as
 * Apple requires), verifies the id_token against apple + "/auth/keys" with the JDK, and answers
 * {"sub": …} or 401 with the reason. (A real one uses its JSON and JWT libraries; this one reads
 * the few fields it needs with regular expressions, to stay dependency-free.)
 */
public final class Callback implements HttpHandler {
    private static final HttpClient HTTP = HttpClient.newBuilder().proxy(java.net.ProxySelector.of(null)).build();
    private final String apple;
    private final String clientId;
    private final String redirectUri;
    private final Supplier<String> clientSecret;

    public Callback(String apple, String clientId, String redirectUri, Supplier<String> clientSecret) {
        this.apple = apple;
        this.clientId = clientId;
        this.redirectUri = redirectUri;
        this.clientSecret = clientSecret;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Map<String, String> form = parse(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            String answer;
            int status;
            try {
                String tokens = post(apple + "/auth/token", Map.of("grant_type", "authorization_code", "code", form.getOrDefault("code", ""),
                        "client_id", clientId, "client_secret", clientSecret.get(), "redirect_uri", redirectUri));
                String idToken = field(tokens, "id_token");
                if (idToken == null) throw new SecurityException("apple said " + field(tokens, "error"));
                answer = "{\"sub\":\"" + verifiedSubject(idToken) + "\"}";
                status = 200;
            } catch (SecurityException e) {
                answer = "{\"error\":\"" + e.getMessage() + "\"}";
                status = 401;
            }
            byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String verifiedSubject(String idToken) throws IOException, InterruptedException {
        String[] parts = idToken.split("\\.");
        String header = new String(Base64.getUrlDecoder().decode(parts[0]), StandardCharsets.UTF_8);
        String claims = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        String kid = field(header, "kid");
        String keys = get(apple + "/auth/keys");
        Matcher key = Pattern.compile("\\{[^}]*\"kid\":\"" + Pattern.quote(kid) + "\"[^}]*}").matcher(keys);
        if (!"RS256".equals(field(header, "alg")) || !key.find()) throw new SecurityException("bad signature");
        try {
            BigInteger n = new BigInteger(1, Base64.getUrlDecoder().decode(field(key.group(), "n")));
            BigInteger e = new BigInteger(1, Base64.getUrlDecoder().decode(field(key.group(), "e")));
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e)));
            verifier.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            if (!verifier.verify(Base64.getUrlDecoder().decode(parts[2]))) throw new SecurityException("bad signature");
        } catch (java.security.GeneralSecurityException failure) {
            throw new SecurityException("bad signature");
        }
        Matcher exp = Pattern.compile("\"exp\":(\\d+)").matcher(claims);
        if (!"https://appleid.apple.com".equals(field(claims, "iss")) || !clientId.equals(field(claims, "aud"))
                || !exp.find() || Long.parseLong(exp.group(1)) * 1000 < System.currentTimeMillis()) {
            throw new SecurityException("bad claims");
        }
        return field(claims, "sub");
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\":\"([^\"]*)\"").matcher(json);
        return m.find() ? m.group(1) : null;
    }

    private static String post(String url, Map<String, String> fields) throws IOException, InterruptedException {
        StringBuilder form = new StringBuilder();
        fields.forEach((k, v) -> form.append(form.length() == 0 ? "" : "&").append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form.toString())).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static String get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static Map<String, String> parse(String form) {
        Map<String, String> fields = new HashMap<>();
        for (String pair : form.split("&")) {
            int equals = pair.indexOf('=');
            if (equals > 0) fields.put(URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8), URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
        }
        return fields;
    }
}
