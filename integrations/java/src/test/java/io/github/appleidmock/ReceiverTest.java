package io.github.appleidmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The receiver takes a genuine notification (200) and refuses each forgery (400), saying why. */
@ExtendWith(AppleIDMockExtension.class)
class ReceiverTest {
    static String forge(String kid, Map<String, Object> claims) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        Signature signer = Signature.getInstance("SHA256withRSA");
        signer.initSign(generator.generateKeyPair().getPrivate());
        String input = Jose.b64(Json.write(Map.of("kid", kid, "alg", "RS256")).getBytes(StandardCharsets.UTF_8)) + "."
                + Jose.b64(Json.write(claims).getBytes(StandardCharsets.UTF_8));
        signer.update(input.getBytes(StandardCharsets.US_ASCII));
        return input + "." + Jose.b64(signer.sign());
    }

    static String genuine(AppleIDMock mock, Map<String, Object> fields) {
        Map<String, Object> all = new LinkedHashMap<>(Map.of("kind", "notification", "type", "consent-revoked"));
        all.putAll(fields);
        Map<String, Object> answer = mock.token("alice", "com.example.app", all);
        return (String) answer.getOrDefault("payload", answer.get("token"));
    }

    static Http.Answer deliver(String url, String body) throws Exception {
        return Http.send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    @Test
    @SuppressWarnings("unchecked")
    void takesAGenuineNotification_AndRefusesEachForgerySayingWhy(AppleIDMock mock) throws Exception {
        NotificationReceiver receiver = mock.notifications();
        int before = receiver.received();
        String real = genuine(mock, Map.of());
        Map<String, Object> claims = (Map<String, Object>) Json.parse(new String(Base64.getUrlDecoder().decode(real.split("\\.")[1]), StandardCharsets.UTF_8));
        Object sub = ((Map<String, Object>) Json.parse((String) claims.get("events"))).get("sub");
        String kid = (String) mock.health().get("active_kid");
        Map<String, Object> elsewhere = new LinkedHashMap<>(claims);
        elsewhere.put("aud", "com.attacker.app");
        List<String[]> cases = List.of(
                new String[] {Json.write(Map.of("payload", real)), null},
                new String[] {Json.write(Map.of("payload", forge(kid, claims))), "the RS256 signature does not verify under " + kid},
                new String[] {Json.write(Map.of("payload", genuine(mock, Map.of("defect", "wrong-issuer")))),
                    "iss is \"https://appleid.apple.com.attacker.example\", not \"https://appleid.apple.com\""},
                new String[] {Json.write(Map.of("payload", forge("nope", elsewhere))), "kid \"nope\" is not published at /auth/keys"},
                new String[] {Json.write(Map.of("payload", "not.a.token")), "the token's header is not base64url JSON"},
                new String[] {"{\"payload\": 5}", "the body has no payload string"},
                new String[] {"x".repeat((1 << 20) + 1), "the body is over 1048576 bytes"},
                // Signed by the mock, each with one claim a careful backend refuses.
                new String[] {Json.write(Map.of("payload", genuine(mock, Map.of("claims", Map.of("aud", "com.attacker.app"))))),
                    "aud \"com.attacker.app\" is none of the scenario's clients"},
                new String[] {Json.write(Map.of("payload", genuine(mock, Map.of("defect", "hs256-public-key")))), "alg is \"HS256\", not RS256"},
                new String[] {Json.write(Map.of("payload", genuine(mock, Map.of("claims", Map.of("events", "{\"sub\":\"x\"}"))))),
                    "the events claim {\"sub\":\"x\"} has no type"});
        for (String[] c : cases) {
            Http.Answer answer = deliver(receiver.url(), c[0]);
            if (c[1] == null) {
                assertEquals(200, answer.status(), answer.text());
                assertEquals(Map.of("ok", true), answer.body());
                Notification notification = receiver.next(Duration.ofSeconds(5));
                assertEquals(List.of("consent-revoked", sub), List.of(notification.type(), notification.sub()));
            } else {
                assertEquals(400, answer.status(), answer.text());
                assertEquals(Map.of("error", c[1]), answer.body());
                assertEquals("a notification failed verification: " + c[1],
                        assertThrows(AppleIDMockError.class, () -> receiver.next(Duration.ofSeconds(5))).getMessage());
            }
        }
        // Issued a day after the mock's clock: refused, naming the iat.
        long future = ((Number) claims.get("iat")).longValue() + 86_400;
        Http.Answer early = deliver(receiver.url(), Json.write(Map.of("payload", genuine(mock, Map.of("claims", Map.of("iat", future))))));
        assertEquals(400, early.status(), early.text());
        String reason = (String) early.body().get("error");
        assertTrue(reason.startsWith("iat " + future + " is after the mock's clock ("), reason);
        assertEquals("a notification failed verification: " + reason,
                assertThrows(AppleIDMockError.class, () -> receiver.next(Duration.ofSeconds(5))).getMessage());
        assertEquals(before + cases.size() + 1, receiver.received());
        Http.Answer get = Http.send(HttpRequest.newBuilder(URI.create(receiver.url())).GET().build());
        assertEquals(405, get.status());
        String nothing = assertThrows(AppleIDMockError.class, () -> receiver.next(Duration.ofMillis(50))).getMessage();
        assertTrue(nothing.startsWith("no notification arrived at " + receiver.url() + " within 50 ms"), nothing);
    }
}
