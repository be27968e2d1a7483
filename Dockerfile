# AppleIDMock as a container: build with the official Swift image, run on Debian slim.
#
#   docker build -t appleid-mock .                                 # podman: add --format docker
#   docker run --rm -p 127.0.0.1:8080:8080 appleid-mock            # http://localhost:8080 (this machine only)
#
# Releases: scripts/release VERSION builds this file with --build-arg APPLEID_MOCK_VERSION=VERSION
# and takes the tarball's binary out of the image it made.
#
# HTTPS standing in for appleid.apple.com: see docker-compose.yml.

# ---- build: the same flags as scripts/bench (static Swift runtime, no PIE) ----
FROM docker.io/library/swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libssl-dev libsqlite3-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# SwiftPM loads every target Package.swift declares before building one product, so the test
# targets' folders must be here too, or it refuses the package ("Source files for target
# MiniHTTPTests should be located under 'Tests/MiniHTTPTests'"). scripts/oci-check builds this
# file from its real context, so a missing folder fails the tests.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# A release (scripts/release VERSION) stamps its version into the one line that holds it, in this
# stage's copy of the sources only; without the argument the sources' own version stays.
ARG APPLEID_MOCK_VERSION=
RUN if [ -n "$APPLEID_MOCK_VERSION" ]; then \
        sed -i "s/^    package static let current = \"[^\"]*\"$/    package static let current = \"$APPLEID_MOCK_VERSION\"/" Sources/AppleIDMock/AppleIDMockVersion.swift \
     && grep -qx "    package static let current = \"$APPLEID_MOCK_VERSION\"" Sources/AppleIDMock/AppleIDMockVersion.swift; \
    fi
RUN swift build -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie --product appleid-mock \
 && install -s -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/appleid-mock" /appleid-mock

# ---- runtime: the binary links OpenSSL and SQLite statically and needs only libstdc++6 and
# libgcc-s1 (in every Debian root); ca-certificates is the CA store for https notification
# receivers (its openssl dependency makes /usr/lib/ssl, where the linked-in OpenSSL looks). scripts/oci-check builds and runs
# the image with podman (`podman build --format docker`: podman's default OCI format drops
# HEALTHCHECK).
FROM docker.io/library/debian:bookworm-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 appleid-mock \
 && useradd --system --uid 10001 --gid 10001 --home-dir /srv/appleid-mock --no-create-home appleid-mock \
 && mkdir -p /srv/appleid-mock /tls /state && chown appleid-mock:appleid-mock /tls /state
COPY --from=build /appleid-mock /usr/local/bin/appleid-mock
# The committed test-only signing keys the built-in scenario names (Keys/signing).
COPY Keys /srv/appleid-mock/Keys
WORKDIR /srv/appleid-mock
USER appleid-mock
# Inside a container the mock listens on every interface; `health` (and the other control
# commands) reach it at APPLEID_MOCK_SERVER, checked against APPLEID_MOCK_CA when https.
ENV APPLEID_MOCK_HOST=0.0.0.0 \
    APPLEID_MOCK_PORT=8080 \
    APPLEID_MOCK_SERVER=http://127.0.0.1:8080
EXPOSE 8080 443
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=5 CMD ["appleid-mock", "health", "--timeout", "2"]
# SIGTERM (docker stop) drains in-flight requests and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["appleid-mock"]
CMD ["serve"]
