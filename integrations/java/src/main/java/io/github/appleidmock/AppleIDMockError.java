package io.github.appleidmock;

/**
 * The mock refused a request, or would not start: the message says why in the mock's own words
 * (its JSON error and field, or the stderr of a mock that exited). {@link #status()} and
 * {@link #body()} are the answer's, when there was one (status 0 otherwise).
 */
public class AppleIDMockError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final transient Object body;

    public AppleIDMockError(String message) {
        this(message, 0, null, null);
    }

    public AppleIDMockError(String message, int status, Object body, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.body = body;
    }

    public int status() {
        return status;
    }

    public Object body() {
        return body;
    }
}
