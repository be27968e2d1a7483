"""AppleIDMock for Python tests: a pytest plugin (fixtures `appleid_mock`, `appleid_mock_reset`,
`apple_notifications`), the object they hand tests (`AppleIDMock`), and a Testcontainers module
(`appleid_mock.testcontainers.AppleIDMockContainer`, with the `testcontainers` extra)."""
from .mock import AppleIDMock, AppleIDMockError, Faults
from .notifications import AppleNotifications, NotificationReceiver
from .process import MockProcess, find_binary

__all__ = ["AppleIDMock", "AppleIDMockError", "AppleNotifications", "Faults", "MockProcess", "NotificationReceiver", "find_binary"]
__version__ = "0.2.0"
