package io.github.appleidmock;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * {@code appleid-mock serve} as a child process: the binary found, a free port, the scenario
 * written with the notification receiver wired in, health awaited, stderr kept for errors, and
 * the process stopped on every way out: a failed start, stop(), the JVM's exit and SIGINT,
 * SIGTERM and SIGHUP (a shutdown hook). Only a SIGKILL of the JVM, which nothing can catch,
 * leaves the mock running.
 */
final class MockProcess {
    private static final int STDERR_LINES = 2000;
    // Every mock this JVM started and has not stopped: the shutdown hook stops them.
    private static final Set<MockProcess> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (MockProcess running : RUNNING) running.process.destroyForcibly();
        }, "appleid-mock stop"));
    }

    private final Process process;
    private final Path directory;
    private final NotificationReceiver receiver;
    private final Deque<String> stderr = new ArrayDeque<>();
    private final CompletableFuture<String> listening = new CompletableFuture<>();
    private Integer status;

    private MockProcess(Process process, Path directory, NotificationReceiver receiver) {
        this.process = process;
        this.directory = directory;
        this.receiver = receiver;
    }

    static AppleIDMock start(Options options) {
        String binary = findBinary(options.binary);
        Map<String, Object> scenario = options.scenario != null || options.scenarioFile != null ? options.scenarioObject() : builtInScenario(binary);
        NotificationReceiver receiver = options.notifications ? new NotificationReceiver() : null;
        Path directory = null;
        Path file;
        try {
            if (receiver != null) scenario = wireReceiver(scenario, receiver.url());
            directory = Files.createTempDirectory("appleid-mock-");
            file = directory.resolve("scenario.json");
            Files.writeString(file, Json.write(scenario));
        } catch (IOException | RuntimeException e) {
            if (receiver != null) receiver.close();
            if (directory != null) deleteTree(directory);
            throw new AppleIDMockError("the scenario could not be written: " + e.getMessage());
        }
        List<String> command = new ArrayList<>(List.of(binary, "serve", "--port", "0", "--scenario", file.toString()));
        command.addAll(options.serveArgs);
        ProcessBuilder builder = new ProcessBuilder(command);
        mockEnvironment(builder.environment(), options.controlToken);
        Process child;
        try {
            child = builder.start();
        } catch (IOException e) {
            deleteTree(directory);
            if (receiver != null) receiver.close();
            throw new AppleIDMockError(binary + " cannot be run: " + e.getMessage());
        }
        MockProcess mock = new MockProcess(child, directory, receiver);
        RUNNING.add(mock);
        mock.read();
        try {
            String line;
            try {
                line = mock.listening.get(options.timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AppleIDMockError("appleid-mock serve printed nothing within " + options.timeout.toMillis() + " ms");
            }
            if (line == null) {
                // Its first line was not "listening on …": a refused scenario exits at once, with its reasons.
                if (!child.waitFor(5, TimeUnit.SECONDS)) {
                    throw new AppleIDMockError("appleid-mock serve did not say it was listening (" + String.join(" ", command) + "):\n"
                            + String.join("\n", mock.logs()));
                }
                throw new AppleIDMockError("appleid-mock serve exited " + child.exitValue() + " before listening (" + String.join(" ", command) + "):\n"
                        + String.join("\n", mock.logs()));
            }
            AppleIDMock started = new AppleIDMock(line, options, scenario, mock, receiver);
            if (receiver != null) receiver.attach(started);
            started.waitUntilHealthy(options.timeout, () -> {
                if (!child.isAlive()) throw new AppleIDMockError("appleid-mock exited " + child.exitValue() + ":\n" + String.join("\n", mock.logs()));
            });
            return started;
        } catch (InterruptedException | ExecutionException | RuntimeException e) {
            // A mock that never became healthy is stopped here: the caller gets no object to stop.
            mock.kill();
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            if (e instanceof AppleIDMockError refusal) throw refusal;
            throw new AppleIDMockError("appleid-mock did not start: " + e, 0, null, e);
        }
    }

    long pid() {
        return process.pid();
    }

    synchronized List<String> logs() {
        return new ArrayList<>(stderr);
    }

    /** SIGTERM, then the exit status (0 for a clean stop); SIGKILL after timeout. */
    int stop(Duration timeout) {
        synchronized (this) {
            if (status != null) return status;
        }
        process.destroy();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        return finished();
    }

    private void kill() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        finished();
    }

    private synchronized int finished() {
        if (status == null) {
            RUNNING.remove(this);
            // A mock SIGTERM stopped exits 0; the JDK reports a signal as 128 + its number.
            status = process.isAlive() ? -1 : process.exitValue();
            if (receiver != null) receiver.close();
            deleteTree(directory);
        }
        return status;
    }

    private void read() {
        Thread out = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String first = lines.readLine();
                listening.complete(first != null && first.startsWith("listening on ") ? first.substring("listening on ".length()).trim() : null);
                // The rest of stdout is read and dropped, so the mock never blocks on a full pipe.
                while (lines.readLine() != null) {
                    // dropped
                }
            } catch (IOException e) {
                listening.complete(null);
            }
        }, "appleid-mock stdout");
        Thread err = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null;) {
                    synchronized (this) {
                        stderr.addLast(line);
                        if (stderr.size() > STDERR_LINES) stderr.removeFirst();
                    }
                }
            } catch (IOException ignored) {
                // the mock is gone
            }
        }, "appleid-mock stderr");
        for (Thread thread : List.of(out, err)) {
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** The appleid-mock binary: explicit, else APPLEID_MOCK_BIN, else appleid-mock on PATH. */
    static String findBinary(String explicit) {
        String named = explicit != null ? explicit : System.getenv("APPLEID_MOCK_BIN");
        if (named != null && !named.isEmpty()) {
            if (!isExecutable(Path.of(named))) throw new AppleIDMockError("the appleid-mock binary " + named + " is not an executable file");
            return named;
        }
        for (String directory : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(directory.isEmpty() ? "." : directory, "appleid-mock");
            if (isExecutable(candidate)) return candidate.toString();
        }
        throw new AppleIDMockError("no appleid-mock binary: give options().binary(…) or APPLEID_MOCK_BIN, or put appleid-mock on PATH"
                + " (a release tarball, or `swift build` in a checkout)");
    }

    private static boolean isExecutable(Path path) {
        return Files.isRegularFile(path) && Files.isExecutable(path);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> builtInScenario(String binary) {
        ProcessBuilder builder = new ProcessBuilder(binary, "scenario", "print");
        mockEnvironment(builder.environment(), null);
        try {
            Process print = builder.redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String text;
            try (InputStream in = print.getInputStream()) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (print.waitFor() != 0) throw new AppleIDMockError(binary + " scenario print exited " + print.exitValue());
            return (Map<String, Object>) Json.parse(text);
        } catch (IOException | IllegalArgumentException e) {
            throw new AppleIDMockError(binary + " scenario print failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AppleIDMockError(binary + " scenario print was interrupted");
        }
    }

    /** A copy of scenario whose teams without a notification_url send theirs to url. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> wireReceiver(Map<String, Object> scenario, String url) {
        Map<String, Object> wired = (Map<String, Object>) Json.parse(Json.write(scenario));
        // A malformed scenario goes to the mock as it is: its refusal says what is wrong.
        if (wired.get("teams") instanceof List<?> teams) {
            for (Object team : teams) {
                if (team instanceof Map<?, ?> map && (map.get("notification_url") == null || "".equals(map.get("notification_url")))) {
                    ((Map<String, Object>) map).put("notification_url", url);
                }
            }
        }
        return wired;
    }

    // The mock's environment: the JVM's, without APPLEID_MOCK_* settings that would change what
    // the kit asked for, and with the control token when given.
    private static void mockEnvironment(Map<String, String> environment, String token) {
        environment.keySet().removeIf(name -> name.startsWith("APPLEID_MOCK_"));
        if (token != null) environment.put("APPLEID_MOCK_CONTROL_TOKEN", token);
    }

    private static void deleteTree(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // already gone
        }
    }
}
