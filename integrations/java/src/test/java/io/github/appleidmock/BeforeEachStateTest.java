package io.github.appleidmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The mock is reset once before each test, before its @BeforeEach: what that set up stays. */
@ExtendWith(AppleIDMockExtension.class)
class BeforeEachStateTest {
    @BeforeEach
    void aliceSignedInOnce(AppleIDMock mock) {
        // The twin of the test below: fresh before each test, so this is alice's first sign-in.
        assertEquals("alice@example.com", mock.signIn("alice", "com.example.app").get("email"));
    }

    @Test
    void theTestSeesWhatItsBeforeEachDid(AppleIDMock mock) {
        assertNull(mock.signIn("alice", "com.example.app").get("email"));
    }

    @Test
    void andTheNextTestStartsFreshAgain(AppleIDMock mock) {
        assertNull(mock.signIn("alice", "com.example.app").get("email"));
    }
}
