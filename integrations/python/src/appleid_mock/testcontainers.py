"""`AppleIDMockContainer`: the AppleIDMock image as a Testcontainers container (the `testcontainers`
extra). The scenario is copied into the container before it starts, never mounted (a bind mount
fails on rootless engines and remote Docker hosts); it waits until `/__mock/health` answers;
`.mock` is the same `AppleIDMock` object the pytest fixture hands tests, and `.notifications`
the same verified notifications, from a receiver on this machine wired into the scenario.

    with AppleIDMockContainer("ghcr.io/appleid-mock/appleid-mock:0.2.0", scenario="scenario.json") as apple:
        apple.mock.sign_in("alice", "com.example.app")
"""
import json
import os
import pathlib
import time

import docker.errors
from testcontainers.core.container import DockerContainer

from .mock import AppleIDMock, AppleIDMockError
from .notifications import AppleNotifications, NotificationReceiver
from .process import wire_receiver

# Where the image's user reads it (its working directory).
SCENARIO_IN_CONTAINER = "/srv/appleid-mock/scenario.json"
PORT = 8080
# The built-in scenario of each image this process ran, by image id.
_BUILT_IN = {}


class AppleIDMockContainer(DockerContainer):
    """The image (`ghcr.io/appleid-mock/appleid-mock:VERSION`, or one you built), serving
    `scenario` (a file or a dict; None: the built-in one, read from the image) on 8080, with
    `control_token` on the control API when given. With `notifications=True` the scenario's
    teams without a `notification_url` send theirs to a receiver on this machine, listening on
    `notification_bind` and reached from the container as `notification_host` (default: the
    gateway of the container's network, which is this machine for a local engine)."""

    def __init__(self, image, scenario=None, control_token=None, *, notifications=True, notification_bind="0.0.0.0",
                 notification_host=None, timeout=60, **kwargs):
        super().__init__(image, **kwargs)
        self._scenario_source, self._token, self._timeout = scenario, control_token, timeout
        self._notifications, self._bind, self._advertised = notifications, notification_bind, notification_host
        self.receiver = None
        self.mock = None
        self.scenario = None
        # A free port of this machine's loopback when the engine is local: the control API mints
        # tokens for whoever reaches it. A remote engine's loopback is out of reach: every interface.
        host = os.environ.get("DOCKER_HOST", "")
        self._local = not host or host.startswith("unix://")
        self.ports[str(PORT)] = ("127.0.0.1", None) if self._local else None
        if control_token:
            self.with_env("APPLEID_MOCK_CONTROL_TOKEN", control_token)

    def _read_scenario(self):
        source = self._scenario_source
        if isinstance(source, dict):
            return source
        if source is not None:
            return json.loads(pathlib.Path(source).read_text())
        # The built-in one, as this image's binary prints it (once per image).
        images = self.get_docker_client().client.images
        try:
            image_id = images.get(self.image).id
        except docker.errors.ImageNotFound:
            image_id = images.pull(self.image).id
        if image_id not in _BUILT_IN:
            _BUILT_IN[image_id] = json.loads(self._print_scenario(image_id))
        return json.loads(json.dumps(_BUILT_IN[image_id]))

    def _print_scenario(self, image_id):
        """`appleid-mock scenario print` in a container of the image, waited for by polling its
        status, within the timeout. Not `containers.run`: it follows the logs of a container that
        may already have exited, and on podman's Docker API (4.3) that stream can stay open."""
        containers = self.get_docker_client().client.containers
        container = containers.create(image_id, ["scenario", "print"])
        try:
            container.start()
            deadline = time.monotonic() + self._timeout
            container.reload()
            while container.status not in ("exited", "dead"):
                if time.monotonic() > deadline:
                    raise AppleIDMockError(f"appleid-mock scenario print in {self.image} did not end within {self._timeout} s")
                time.sleep(0.1)
                container.reload()
            code = container.attrs.get("State", {}).get("ExitCode")
            if code != 0:
                stderr = container.logs(stdout=False, stderr=True).decode(errors="replace")
                raise AppleIDMockError(f"appleid-mock scenario print in {self.image} exited {code}:\n{stderr}")
            return container.logs(stdout=True, stderr=False)
        finally:
            container.remove(force=True)

    def _gateway(self):
        network = self.get_docker_client().client.networks.get(self._kwargs.get("network") or "bridge")
        for config in network.attrs.get("IPAM", {}).get("Config") or []:
            if config.get("Gateway"):
                return config["Gateway"]
        raise AppleIDMockError(f"the network {network.name} has no gateway: give notification_host=")

    def start(self):
        """Starts the container with the scenario copied in and waits until it is healthy."""
        self.scenario = self._read_scenario()
        if self._notifications:
            self.receiver = NotificationReceiver(self._bind, 0, advertised_host=self._advertised or self._gateway())
            self.scenario = wire_receiver(self.scenario, self.receiver.url)
        self.with_copy_into_container(json.dumps(self.scenario).encode(), SCENARIO_IN_CONTAINER, 0o644)
        self.with_command(["serve", "--scenario", SCENARIO_IN_CONTAINER])
        try:
            super().start()
            url = self._url()
            self.mock = AppleIDMock(url, control_token=self._token, scenario=self.scenario, logs=self._log_lines,
                                    timeout=self._timeout)
            self.mock.wait_until_healthy(self._timeout, alive=self._alive)
        except BaseException:
            self._stop_receiver()
            if self._container is not None:
                super().stop()
            raise
        if self.receiver:
            self.receiver.attach(self.mock)
            self._seen = AppleNotifications(self.receiver)
        return self

    @property
    def notifications(self):
        """The verified notifications since the container started: `.next()`, as the
        `apple_notifications` fixture's."""
        if self.receiver is None:
            raise AppleIDMockError("this container was started with notifications=False")
        return self._seen

    def _url(self):
        """Where the mock answers. A container that exits as it starts (a refused scenario) is an
        error in the mock's words, even when the engine, racing that exit, fails to say where the
        port was published (podman: 500, "read /proc/PID/cgroup: no such process")."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                if self._local:
                    # Where it was published (Testcontainers, run inside a container itself, would
                    # look for the engine's gateway instead).
                    return f"http://127.0.0.1:{self.get_docker_client().port(self.get_container_id(), PORT)}"
                return f"http://{self.get_container_host_ip()}:{self.get_exposed_port(PORT)}"
            except docker.errors.APIError:
                try:
                    self._alive()
                except docker.errors.APIError:
                    pass  # the engine is still mid-exit: ask again
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)

    def _log_lines(self):
        _, stderr = self.get_logs()
        return stderr.decode(errors="replace").splitlines()

    def _alive(self):
        self.get_wrapped_container().reload()
        if self.get_wrapped_container().status in ("exited", "dead"):
            raise AppleIDMockError("the appleid-mock container exited before answering:\n" + "\n".join(self._log_lines()))

    def _stop_receiver(self):
        if self.receiver:
            self.receiver.stop()

    def stop(self, force=True, delete_volume=True):
        """Stops and removes the container, and the receiver."""
        try:
            super().stop(force=force, delete_volume=delete_volume)
        finally:
            self._stop_receiver()
