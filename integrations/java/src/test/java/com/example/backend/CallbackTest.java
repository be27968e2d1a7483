package com.example.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.github.appleidmock.AppleIDMock;
import io.github.appleidmock.AppleIDMockExtension;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

// The backend's own test: its callback pointed at the mock, the kit playing the user and Apple.
@ExtendWith(AppleIDMockExtension.class)
class CallbackTest {
    @Test
    @SuppressWarnings("unchecked")
    void signsTheUserInFromApplesFormPost_Once(AppleIDMock apple) throws Exception {
        HttpServer backend = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        backend.createContext("/auth/apple", new Callback(apple.url(), "com.example.web", "https://app.example.com/callback",
                () -> apple.clientSecret("com.example.web")));
        backend.start();
        try {
            String url = "http://127.0.0.1:" + backend.getAddress().getPort() + "/auth/apple";
            Map<String, Object> delivered = apple.authorizeWeb("alice", Map.of("response_mode", "form_post", "scope", "name email"));
            Map<String, Object> form = (Map<String, Object>) delivered.get("form");

            HttpResponse<String> signedIn = post(url, form);
            assertEquals(200, signedIn.statusCode(), signedIn.body());
            assertTrue(signedIn.body().matches("\\{\"sub\":\"\\d{6}\\.[0-9a-f]{32}\\.\\d{4}\"}"), signedIn.body());

            // The twin: Apple's codes work once, and the backend says so.
            HttpResponse<String> again = post(url, form);
            assertEquals(401, again.statusCode());
            assertEquals("{\"error\":\"apple said invalid_grant\"}", again.body());
        } finally {
            backend.stop(0);
        }
    }

    private static HttpResponse<String> post(String url, Map<String, Object> form) throws Exception {
        String body = form.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "=" + URLEncoder.encode(String.valueOf(e.getValue()), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
