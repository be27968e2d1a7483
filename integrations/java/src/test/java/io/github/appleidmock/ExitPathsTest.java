package io.github.appleidmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every way out of a test JVM stops the mock it started: main returning with no stop(), a failing
 * JUnit test, SIGINT, SIGTERM and SIGHUP, and a failed health wait. The twin of each: while the
 * child ran, its mock was the one process of its in the table.
 */
class ExitPathsTest {
    private static void assertStoppedAfterRunning(Processes.Run run) {
        assertTrue(run.started() > 0, run.output());
        assertEquals(List.of(run.started()), run.seen(), run.output());
        assertEquals(List.of(), run.left(), run.output());
    }

    @Test
    void aJvmThatEndsWithoutStopStopsItsMock(@TempDir Path tmp) throws Exception {
        Processes.Run run = Processes.java(tmp, null, Map.of(), "io.github.appleidmock.fixtures.ForgetsStop");
        assertEquals(0, run.status(), run.output());
        assertStoppedAfterRunning(run);
    }

    @Test
    void aFailingTestStopsItsMock_AndTheLauncherReportsTheFailure(@TempDir Path tmp) throws Exception {
        Processes.Run run = Processes.java(tmp, null, Map.of(), "org.junit.platform.console.ConsoleLauncher", "--disable-banner",
                "--details=summary", "--select-class=io.github.appleidmock.fixtures.FailingFixture");
        assertEquals(1, run.status(), run.output());
        assertTrue(run.output().contains("expected: <not what it says> but was: <ok>"), run.output());
        assertStoppedAfterRunning(run);
    }

    @ParameterizedTest
    @CsvSource({"INT, 130", "TERM, 143", "HUP, 129"})
    void aSignalToTheJvmStopsItsMock(String signal, int status, @TempDir Path tmp) throws Exception {
        Processes.Run run = Processes.java(tmp, signal, Map.of(), "io.github.appleidmock.fixtures.Waits");
        assertEquals(status, run.status(), run.output());
        assertStoppedAfterRunning(run);
    }

    @Test
    void aFailedHealthWaitStopsTheMock_SayingWhatToGive(@TempDir Path tmp, @TempDir Path tls) throws Exception {
        Process generate = new ProcessBuilder(MockProcess.findBinary(null), "tls", "generate", "--out", tls.toString()).inheritIO().start();
        assertEquals(0, generate.waitFor());
        Processes.Run refused = Processes.java(tmp, null, Map.of(), "io.github.appleidmock.fixtures.TlsWithoutCa", tls.toString());
        assertEquals(3, refused.status(), refused.output());
        assertTrue(refused.output().matches("(?s)refused: https://127\\.0\\.0\\.1:\\d+ serves a certificate the JDK does not trust \\(.*\\): give the kit its CA.*"),
                refused.output());
        assertEquals(List.of(), refused.left());
        // The twin: with the CA the same mock is healthy.
        Processes.Run trusted = Processes.java(tmp, null, Map.of("KIT_TEST_CA", "1"), "io.github.appleidmock.fixtures.TlsWithoutCa", tls.toString());
        assertEquals(0, trusted.status(), trusted.output());
        assertTrue(trusted.output().contains("healthy ok"), trusted.output());
        assertEquals(List.of(), trusted.left());
    }
}
