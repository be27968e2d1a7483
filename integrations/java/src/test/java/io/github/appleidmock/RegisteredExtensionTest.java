package io.github.appleidmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An extension registered with options gives the class a mock of its own, reset for each test. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RegisteredExtensionTest {
    @RegisterExtension
    static AppleIDMockExtension apple = new AppleIDMockExtension(AppleIDMock.options().notifications(false));
    static long firstPid;

    @Test
    @Order(1)
    void theClassHasItsOwnMock_WithTheOptionsGiven(AppleIDMock mock) {
        assertNull(mock.notifications());
        firstPid = mock.pid();
        assertEquals("alice@example.com", mock.signIn("alice", "com.example.app").get("email"));
    }

    @Test
    @Order(2)
    void theNextTestGetsTheSameMock_Reset(AppleIDMock mock) {
        assertEquals(firstPid, mock.pid());
        assertNotEquals(-1, mock.pid());
        assertEquals("alice@example.com", mock.signIn("alice", "com.example.app").get("email"));
    }
}
