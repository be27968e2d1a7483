package io.github.appleidmock;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the exit-path tests share: a child JVM with its own java.io.tmpdir (where the kit writes
 * the scenario its mock serves, so the process table tells whether a mock of that child is still
 * running), and a scan of the process table.
 */
final class Processes {
    private Processes() {}

    record Run(int status, String output, long started, List<Long> seen, List<Long> left) {}

    /** The pids of processes whose command line names text (/proc). A zombie holds no command line. */
    static List<Long> naming(String text) {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String name = entry.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) continue;
                try {
                    if (new String(Files.readAllBytes(entry.resolve("cmdline")), StandardCharsets.UTF_8).contains(text)) found.add(Long.parseLong(name));
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return found;
    }

    /** Waits until no process names text; answers the ones still there after a minute (a bound, not a timing assertion). */
    static List<Long> waitForNone(String text) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofMinutes(1));
        for (;;) {
            List<Long> left = naming(text);
            if (left.isEmpty() || Instant.now().isAfter(deadline)) return left;
            Thread.sleep(50);
        }
    }

    /**
     * Runs a child JVM with this one's class path: {@code arguments} after {@code java}. When it
     * prints "started PID", the table is read, then signal (e.g. "INT") is sent to it, or when
     * signal is null it is told to go on (a line on its stdin).
     */
    static Run java(Path tmp, String signal, Map<String, String> environment, String... arguments) throws Exception {
        // Through python3, which gives SIGINT back its default: a background job of a
        // non-interactive shell (scripts/test's parts) starts with SIGINT ignored, every child
        // inherits that, and a JVM keeps ignoring it, as any process started that way would.
        List<String> command = new ArrayList<>(List.of("python3", "-c",
                "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path")));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process child = builder.start();
        StringBuilder output = new StringBuilder();
        long started = 0;
        List<Long> seen = List.of();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
             OutputStream proceed = child.getOutputStream()) {
            for (String line; (line = lines.readLine()) != null;) {
                output.append(line).append('\n');
                if (line.startsWith("started ") && started == 0) {
                    started = Long.parseLong(line.substring("started ".length()).trim());
                    // The child JVM names its java.io.tmpdir too: the mock is the other one.
                    seen = naming(tmp.toString());
                    seen.remove(Long.valueOf(child.pid()));
                    if (signal != null) {
                        new ProcessBuilder("kill", "-s", signal, Long.toString(child.pid())).inheritIO().start().waitFor();
                        // A bound for a child that does not end by the signal, not a timing assertion.
                        ProcessHandle handle = child.toHandle();
                        Thread killer = new Thread(() -> {
                            try {
                                if (!child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) handle.destroyForcibly();
                            } catch (InterruptedException ignored) {
                                // the test ended
                            }
                        });
                        killer.setDaemon(true);
                        killer.start();
                    } else {
                        proceed.write("go on\n".getBytes(StandardCharsets.US_ASCII));
                        proceed.flush();
                    }
                }
            }
        }
        int status = child.waitFor();
        return new Run(status, output.toString(), started, seen, waitForNone(tmp.toString()));
    }
}
