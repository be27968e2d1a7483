package io.github.appleidmock;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.StringJoiner;

/** A backend's requests to Apple's routes, in the tests: form posts and GETs, with their answers. */
final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().proxy(java.net.ProxySelector.of(null)).build();

    private Http() {}

    record Answer(int status, Object json, String text) {
        @SuppressWarnings("unchecked")
        Map<String, Object> body() {
            return (Map<String, Object>) json;
        }
    }

    static String form(Map<String, String> fields) {
        StringJoiner form = new StringJoiner("&");
        fields.forEach((name, value) -> form.add(URLEncoder.encode(name, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8)));
        return form.toString();
    }

    static Answer post(String url, Map<String, String> fields) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form(fields))).build());
    }

    static Answer send(HttpRequest request) throws Exception {
        HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        Object json;
        try {
            json = Json.parse(response.body());
        } catch (IllegalArgumentException e) {
            json = null;
        }
        return new Answer(response.statusCode(), json, response.body());
    }
}
