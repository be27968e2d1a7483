package io.github.appleidmock;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * {@code @ExtendWith(AppleIDMockExtension.class)}: a test or lifecycle method that takes an
 * {@link AppleIDMock} parameter gets the run's mock, started on first use (the built-in scenario,
 * the binary from APPLEID_MOCK_BIN or PATH, a notification receiver wired in) and reset to the
 * scenario's start before each test (before its {@code @BeforeEach} methods, once), its pending
 * notifications dropped. It stops when the run ends, and with the JVM on any other way out but
 * SIGKILL.
 *
 * <p>For another scenario or options, register the extension with them:
 * {@code @RegisterExtension static AppleIDMockExtension apple = new AppleIDMockExtension(AppleIDMock.options().scenario(path));}
 * (a mock for that class, stopped after it).
 */
public class AppleIDMockExtension implements ParameterResolver, BeforeEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(AppleIDMockExtension.class);
    private final Options options;

    public AppleIDMockExtension() {
        this.options = null;
    }

    public AppleIDMockExtension(Options options) {
        this.options = options;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == AppleIDMock.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return owner(context).getStore(NAMESPACE).getOrComputeIfAbsent(Running.class,
                key -> new Running(AppleIDMock.start(options == null ? AppleIDMock.options() : options)), Running.class).mock;
    }

    /** Before each test (and its @BeforeEach methods): a mock already running goes back to the scenario's start. */
    @Override
    public void beforeEach(ExtensionContext context) {
        Running running = owner(context).getStore(NAMESPACE).get(Running.class, Running.class);
        if (running == null) return; // started on first use, fresh
        running.mock.reset();
        if (running.mock.notifications() != null) running.mock.notifications().skipPending();
    }

    // The default mock is the run's (the root store); one with options is its class's.
    private ExtensionContext owner(ExtensionContext context) {
        return options == null ? context.getRoot() : classContext(context);
    }

    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext current = context;
        while (current.getTestMethod().isPresent() && current.getParent().isPresent()) current = current.getParent().get();
        return current;
    }

    /** The store closes it when its context ends. */
    private static final class Running implements ExtensionContext.Store.CloseableResource {
        final AppleIDMock mock;

        Running(AppleIDMock mock) {
            this.mock = mock;
        }

        @Override
        public void close() {
            int status = mock.stop();
            if (status != 0) throw new AppleIDMockError("appleid-mock stopped with status " + status + ":\n" + String.join("\n", mock.logs()));
        }
    }
}
