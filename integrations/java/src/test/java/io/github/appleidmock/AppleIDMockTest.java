package io.github.appleidmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every method against the run's mock (the extension's, reset for each test), each with its refused twin. */
@ExtendWith(AppleIDMockExtension.class)
class AppleIDMockTest {
    static final String APP = "com.example.app";

    static Http.Answer exchange(AppleIDMock mock, String code, String secret) throws Exception {
        return Http.post(mock.url() + "/auth/token", Map.of("grant_type", "authorization_code", "code", code, "client_id", APP, "client_secret", secret));
    }

    static String code(AppleIDMock mock) {
        return (String) mock.signIn("alice", APP).get("authorizationCode");
    }

    static String pkcs8(String algorithm, String curve) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
        if (curve != null) generator.initialize(new ECGenParameterSpec(curve));
        else generator.initialize(1024);
        return "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder().encodeToString(generator.generateKeyPair().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
    }

    @Test
    void signInExchangeVerifyRevoke_AndTheVerifiedNotificationArrives(AppleIDMock mock) throws Exception {
        Map<String, Object> credential = mock.signIn("alice", APP);
        assertEquals("alice@example.com", credential.get("email"));
        Http.Answer tokens = exchange(mock, (String) credential.get("authorizationCode"), mock.clientSecret(APP));
        assertEquals(200, tokens.status(), tokens.text());
        Map<String, Object> claims = mock.verifyIdToken((String) tokens.body().get("id_token"), APP);
        mock.fireEvent("consent-revoked", "alice", APP);
        Notification notification = mock.notifications().next(Duration.ofSeconds(30));
        assertEquals("consent-revoked", notification.type());
        assertEquals(claims.get("sub"), notification.sub());
        // The twin: the code works once.
        Http.Answer again = exchange(mock, (String) credential.get("authorizationCode"), mock.clientSecret(APP));
        assertEquals(400, again.status());
        assertEquals(Map.of("error", "invalid_grant", "error_description", "The code has already been used."), again.body());
    }

    static Stream<Arguments> secrets() throws Exception {
        AppleIDMock.SecretOptions defaults = new AppleIDMock.SecretOptions();
        return Stream.of(
                Arguments.of("the built-in key", APP, defaults, 200, null),
                Arguments.of("Apple's longest lifetime", APP, new AppleIDMock.SecretOptions().lifetime(AppleIDMock.MAX_SECRET_LIFETIME), 200, null),
                Arguments.of("one second longer", APP, new AppleIDMock.SecretOptions().lifetime(AppleIDMock.MAX_SECRET_LIFETIME.plusSeconds(1)), 0,
                        "clientSecret: lifetime 15777001 s is outside 1…15777000 s (Apple's six months)"),
                Arguments.of("another key", APP, new AppleIDMock.SecretOptions().key(pkcs8("EC", "secp256r1")), 400,
                        "POST /auth/token 400 invalid_client — client_secret signature does not verify with key MOCKKEY001 of team MOCKTEAM01"),
                Arguments.of("another client", "com.example.web", defaults, 400,
                        "POST /auth/token 400 invalid_client — client_secret sub is com.example.web but client_id is com.example.app"),
                Arguments.of("an RSA key", APP, new AppleIDMock.SecretOptions().key(pkcs8("RSA", null)), 0,
                        "clientSecret: the key given: the key is RSA, not an EC P-256 key"),
                Arguments.of("a P-384 key", APP, new AppleIDMock.SecretOptions().key(pkcs8("EC", "secp384r1")), 0,
                        "clientSecret: the key given: the key is EC on another curve, not an EC P-256 key"),
                Arguments.of("a key id without its key", APP, new AppleIDMock.SecretOptions().keyId("OTHERKEY01"), 0,
                        "clientSecret: key OTHERKEY01 of team MOCKTEAM01 is not the built-in test key; pass key(…) (the path of its .p8, or its PEM)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("secrets")
    void clientSecret_AcceptedOrRefused_WithTheMocksReason(String name, String clientId, AppleIDMock.SecretOptions options, int status,
            String refusal, AppleIDMock mock) throws Exception {
        if (status == 0) {
            assertEquals(refusal, assertThrows(AppleIDMockError.class, () -> mock.clientSecret(clientId, options)).getMessage());
            return;
        }
        String secret = mock.clientSecret(clientId, options);
        long mark = mock.journalMark();
        Http.Answer answer = exchange(mock, code(mock), secret);
        assertEquals(status, answer.status(), answer.text());
        assertEquals(refusal == null ? List.of() : List.of(refusal), mock.refusals(mark));
    }

    @Test
    void builtInKey_IsTheRepositorysTestKey() throws Exception {
        assertEquals(Files.readString(Path.of(System.getProperty("appleid.mock.repository", "../.."), "Keys", "AuthKey_MOCKKEY001.p8")), AppleIDMock.builtInKey());
    }

    @Test
    @SuppressWarnings("unchecked")
    void authorizeWeb_DeliversAsAppleWould_AndAnUnknownResponseModeIsRefused(AppleIDMock mock) {
        Map<String, Object> posted = mock.authorizeWeb("alice", Map.of("response_mode", "form_post", "scope", "name email", "state", "s1"));
        Map<String, Object> form = (Map<String, Object>) posted.get("form");
        assertEquals(List.of("POST", "https://app.example.com/callback", "s1"), List.of(posted.get("method"), posted.get("url"), form.get("state")));
        assertEquals("{\"name\":{\"firstName\":\"Alice\",\"lastName\":\"Appleseed\"},\"email\":\"alice@example.com\"}", form.get("user"));
        // The twin: Apple sends the user only the first time.
        assertNull(((Map<String, Object>) mock.authorizeWeb("alice", Map.of("response_mode", "form_post", "scope", "name email")).get("form")).get("user"));
        Map<String, Object> web = mock.authorizeWeb("alice", Map.of("state", "s2"));
        assertTrue(((String) web.get("url")).matches("https://app\\.example\\.com/callback\\?code=c[^&]+&state=s2"), web.toString());
        Map<String, Object> popup = mock.authorizeWeb("alice", Map.of("response_mode", "web_message", "state", "s3"));
        assertEquals(List.of("postMessage", "https://app.example.com"), List.of(popup.get("method"), popup.get("target_origin")));
        AppleIDMockError refused = assertThrows(AppleIDMockError.class, () -> mock.authorizeWeb("alice", Map.of("response_mode", "web_msg")));
        assertEquals(400, refused.status());
        assertTrue(refused.getMessage().endsWith("(field response_mode)"), refused.getMessage());
    }

    @Test
    void faults_ActListAndClear_AnIncidentLastsItsMinutes(AppleIDMock mock) throws Exception {
        Map<String, Object> fault = mock.addFault(Map.of("path", "/auth/token", "times", 1, "action", "respond", "status", 503));
        assertEquals(List.of("f1", 1L), List.of(fault.get("id"), fault.get("remaining")));
        String first = code(mock);
        assertEquals(503, exchange(mock, first, mock.clientSecret(APP)).status());
        assertEquals(200, exchange(mock, first, mock.clientSecret(APP)).status());
        Map<String, Object> spent = mock.faults().get(0);
        assertEquals(List.of(1L, 0L), List.of(spent.get("fired"), spent.get("remaining")));
        assertEquals(1, mock.clearFaults(null));
        AppleIDMockError refused = assertThrows(AppleIDMockError.class, () -> mock.addFault(Map.of("path", "/__mock/reset", "action", "close")));
        assertTrue(refused.getMessage().endsWith("(field path)"), refused.getMessage());

        mock.incident("token-endpoint-outage", 1);
        String later = code(mock);
        assertEquals(503, exchange(mock, later, mock.clientSecret(APP)).status());
        mock.advanceClock(61);
        assertEquals(200, exchange(mock, later, mock.clientSecret(APP, new AppleIDMock.SecretOptions().issuedAt(Instant.now().plusSeconds(61)))).status());
        assertEquals(List.of(), mock.faults());
        AppleIDMockError unknown = assertThrows(AppleIDMockError.class, () -> mock.incident("no-such-incident", 0));
        assertTrue(unknown.getMessage().matches("POST /__mock/faults answered 400: .* \\(field incident\\)"), unknown.getMessage());
    }

    @Test
    void rotateKeys_AFreshKeySigns_AndTheReceiverFollowsIt(AppleIDMock mock) throws Exception {
        Map<String, Object> rotated = mock.rotateKeys();
        assertEquals("W2ek7HdPaL", rotated.get("previous"));
        String idToken = (String) exchange(mock, code(mock), mock.clientSecret(APP)).body().get("id_token");
        String header = new String(Base64.getUrlDecoder().decode(idToken.split("\\.")[0]));
        assertTrue(header.contains("\"kid\":\"" + rotated.get("kid") + "\""), header);
        mock.fireEvent("consent-revoked", "alice", APP);
        assertEquals(rotated.get("kid"), mock.notifications().next(Duration.ofSeconds(30)).kid());
    }

    @Test
    void changePassword_EndsTheRefreshToken_AndAnUnknownUserIsRefused(AppleIDMock mock) throws Exception {
        String secret = mock.clientSecret(APP);
        Map<String, Object> tokens = exchange(mock, code(mock), secret).body();
        Map<String, String> refresh = Map.of("grant_type", "refresh_token", "refresh_token", (String) tokens.get("refresh_token"), "client_id", APP, "client_secret", secret);
        assertEquals(200, Http.post(mock.url() + "/auth/token", refresh).status());
        Map<String, Object> changed = mock.changePassword("alice");
        assertNull(changed.get("notification"));
        assertEquals(List.of(List.of(), "password-changed", "alice"), List.of(changed.get("notifications"), changed.get("type"), changed.get("user")));
        Http.Answer after = Http.post(mock.url() + "/auth/token", refresh);
        assertEquals(400, after.status());
        assertEquals(Map.of("error", "invalid_grant"), after.body());
        AppleIDMockError refused = assertThrows(AppleIDMockError.class, () -> mock.changePassword("mallory"));
        assertEquals(404, refused.status());
        assertTrue(refused.getMessage().endsWith("(field user)"), refused.getMessage());
    }

    @Test
    void eachTestStartsFromTheScenario_AndWithinOneTheSecondSignInHasNoEmail(AppleIDMock mock) {
        assertEquals("alice@example.com", mock.signIn("alice", APP).get("email"));
        assertNull(mock.signIn("alice", APP).get("email"));
        mock.reset();
        assertEquals("alice@example.com", mock.signIn("alice", APP).get("email"));
    }

    @Test
    void requests_TheJournalFiltered_AndARefusalCarriesReasonAndField(AppleIDMock mock) {
        String mark = Long.toString(mock.journalMark());
        mock.signIn("bob", APP);
        List<Map<String, Object>> journal = mock.requests(Map.of("path", "/__mock/sign-in", "after", mark));
        assertEquals(1, journal.size());
        assertEquals(List.of("POST", 200L), List.of(journal.get(0).get("method"), journal.get(0).get("status")));
        assertEquals(List.of(), mock.requests(Map.of("path", "/auth/token", "after", mark)));
        AppleIDMockError refused = assertThrows(AppleIDMockError.class, () -> mock.signIn("nobody", APP));
        assertEquals(400, refused.status());
        assertEquals("POST /__mock/sign-in answered 400: no user \"nobody\" in the scenario (field user)", refused.getMessage());
    }

    @Test
    void verifyIdToken_TakesAGenuineToken_AndRefusesEachDefect(AppleIDMock mock) {
        assertNotNull(mock.verifyIdToken((String) mock.token("alice", APP, Map.of()).get("id_token"), APP).get("sub"));
        for (String[] c : new String[][] {
                {"bad-signature", "the id_token does not verify: the RS256 signature does not verify under W2ek7HdPaL"},
                {"alg-none", "the id_token does not verify: alg is \"none\", not RS256"},
                {"wrong-issuer", "the id_token does not verify: iss is \"https://appleid.apple.com.attacker.example\", not \"https://appleid.apple.com\""},
                {"wrong-audience", "the id_token does not verify: aud is \"com.attacker.app\", not \"com.example.app\""},
                {"expired", "the id_token does not verify: exp "}}) {
            String token = (String) mock.token("alice", APP, Map.of("defect", c[0])).get("id_token");
            String message = assertThrows(AppleIDMockError.class, () -> mock.verifyIdToken(token, APP)).getMessage();
            assertTrue(message.startsWith(c[1]), c[0] + ": " + message);
        }
    }

    @Test
    void attach_DrivesARunningMock_AndNothingListeningIsNamed(AppleIDMock mock) {
        AppleIDMock attached = AppleIDMock.attach(mock.url());
        assertEquals("alice@example.com", attached.signIn("alice", APP).get("email"));
        attached.close(); // does nothing to a mock it did not start
        assertEquals("ok", mock.health().get("status"));
        AppleIDMockError nothing = assertThrows(AppleIDMockError.class,
                () -> AppleIDMock.attach("http://127.0.0.1:9", AppleIDMock.options().timeout(Duration.ofMillis(200))));
        assertTrue(nothing.getMessage().startsWith("http://127.0.0.1:9 did not answer /__mock/health within 200 ms: GET http://127.0.0.1:9/__mock/health: connection refused"),
                nothing.getMessage());
        assertEquals("the mock's url \"127.0.0.1:8080\" is not an http:// or https:// URL",
                assertThrows(AppleIDMockError.class, () -> AppleIDMock.attach("127.0.0.1:8080")).getMessage());
    }

    @Test
    void start_ARefusedScenarioFailsWithTheMocksWords_AndItsTwinServes(@TempDir Path directory) throws Exception {
        Path bad = Files.writeString(directory.resolve("bad.json"), "{\"teams\": 5}");
        AppleIDMockError refused = assertThrows(AppleIDMockError.class, () -> AppleIDMock.start(AppleIDMock.options().scenario(bad)));
        assertTrue(refused.getMessage().startsWith("appleid-mock serve exited 2 before listening"), refused.getMessage());
        assertTrue(refused.getMessage().contains("teams"), refused.getMessage());
        try (AppleIDMock served = AppleIDMock.start(AppleIDMock.options().notifications(false))) {
            assertNull(served.notifications());
            assertEquals("ok", served.health().get("status"));
            assertInstanceOf(Long.class, served.advanceClock(0).get("offset"));
        }
    }

    @Test
    void findBinary_AnExplicitPathThatIsNotExecutableIsNamed() {
        assertEquals("the appleid-mock binary pom.xml is not an executable file",
                assertThrows(AppleIDMockError.class, () -> AppleIDMock.start(AppleIDMock.options().binary("pom.xml"))).getMessage());
        assertTrue(Files.isExecutable(Path.of(MockProcess.findBinary(null))));
    }
}
