package io.github.appleidmock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** AppleIDMock.start's and attach's choices: {@code AppleIDMock.options().scenario(path).timeout(…)}. */
public final class Options {
    String binary;
    Map<String, Object> scenario;
    Path scenarioFile;
    final List<String> serveArgs = new ArrayList<>();
    String ca;
    String controlToken;
    boolean notifications = true;
    Duration timeout = Duration.ofSeconds(30);

    Options() {}

    /** The appleid-mock binary (default APPLEID_MOCK_BIN, then PATH). */
    public Options binary(String path) { this.binary = path; return this; }
    /** The scenario to serve, as an object (default the built-in one). */
    public Options scenario(Map<String, Object> scenario) { this.scenario = scenario; return this; }
    /** The scenario to serve, as a JSON file. */
    public Options scenario(Path file) { this.scenarioFile = file; return this; }
    /** Further arguments of {@code appleid-mock serve} (e.g. --tls-cert, --tls-key). */
    public Options serveArgs(String... args) { this.serveArgs.addAll(List.of(args)); return this; }
    /** The PEM text or path of an https mock's CA. */
    public Options ca(String pemOrPath) { this.ca = pemOrPath; return this; }
    /** The bearer token of a mock whose control API asks for one. */
    public Options controlToken(String token) { this.controlToken = token; return this; }
    /** Whether a notification receiver is wired into the scenario (default true). */
    public Options notifications(boolean on) { this.notifications = on; return this; }
    /** Bounds the health wait and each request (default 30 s). */
    public Options timeout(Duration timeout) { this.timeout = timeout; return this; }

    @SuppressWarnings("unchecked")
    Map<String, Object> scenarioObject() {
        if (scenario != null || scenarioFile == null) return scenario;
        try {
            Object parsed = Json.parse(Files.readString(scenarioFile));
            if (parsed instanceof Map) return (Map<String, Object>) parsed;
            throw new AppleIDMockError("the scenario " + scenarioFile + " is not a JSON object");
        } catch (IOException | IllegalArgumentException e) {
            throw new AppleIDMockError("the scenario " + scenarioFile + ": " + e.getMessage());
        }
    }
}
