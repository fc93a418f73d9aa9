"""The simulated kubelet's pure parts: image names, durations, phases, logs."""

from __future__ import annotations

from typing import Any

import pytest

from stackwright.localcluster import status
from stackwright.localcluster.controllers.kubelet import (
    KUBELET_SECOND,
    RUN_TIME,
    ContainerRun,
    PodRun,
    behaviour,
    container_log,
    go_duration,
    image_id,
    image_reference,
    run_length,
)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("nginx:1.29", "docker.io/library/nginx:1.29"),
        ("nginx", "docker.io/library/nginx:latest"),
        ("bitnami/redis:7", "docker.io/bitnami/redis:7"),
        ("ghcr.io/org/app:v1", "ghcr.io/org/app:v1"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
    ],
)
def test_image_reference(image: str, expected: str) -> None:
    assert image_reference(image) == expected


def test_image_id_is_stable_per_image() -> None:
    assert image_id("nginx:1.29") == image_id("nginx:1.29")
    assert image_id("nginx:1.29").startswith("docker.io/library/nginx@sha256:")
    assert image_id("nginx:1.29") != image_id("nginx:1.28")


@pytest.mark.parametrize(
    ("image", "kind"),
    [
        ("example/doesnotexist:1", "doesnotexist"),
        ("crashloop", "crashloop"),
        ("my-exit1-job", "exit1"),
        ("exit0:latest", "exit0"),
        ("NotReady:2", "notready"),
        ("nginx:1.29", "healthy"),
    ],
)
def test_behaviour_by_image_name(image: str, kind: str) -> None:
    assert behaviour(image) == kind


ECHO = {"image": "busybox:1.36", "command": ["sh", "-c", "echo hello"]}
PI = {"image": "perl:5.34.0", "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}


def shell(script: str) -> dict[str, Any]:
    return {"image": "busybox:1.36", "command": ["sh", "-c", script]}


@pytest.mark.parametrize(
    ("spec", "policy", "seconds"),
    [
        # Run-to-completion work: a command in a pod that is not restarted once it succeeds.
        (ECHO, "Never", RUN_TIME),
        (PI, "OnFailure", RUN_TIME),
        ({"image": "registry.local/app:2", "args": ["migrate"]}, "Never", RUN_TIME),
        # `sleep N` runs N kubelet seconds (never less than RUN_TIME); with a unit too.
        ({"image": "busybox", "command": ["sleep", "30"]}, "Never", 30 * KUBELET_SECOND),
        (shell("sleep 1m && echo done"), "Never", 60 * KUBELET_SECOND),
        (shell("sleep 2; echo a; sleep 3"), "OnFailure", 5 * KUBELET_SECOND),
        (shell("sleep 1"), "Never", RUN_TIME),
        # Never ends by itself: runs until stopped, as before.
        (shell("sleep infinity"), "Never", None),
        ({"image": "busybox", "args": ["tail", "-f", "/dev/null"]}, "Never", None),
        (shell("while true; do date; sleep 5; done"), "OnFailure", None),
        (shell("while :; do date; done; exit 0"), "Never", None),  # the exit is past its done
        # A loop that leaves (break, exit) is a wait that ends: run to completion.
        (shell("while true; do nc -z db 5432 && break; sleep 2; done"), "Never", RUN_TIME),
        (shell("while true; do echo not done; sleep 1; break; done"), "Never", RUN_TIME),
        (
            shell("while true\ndo\n  if ready; then\n    exit 0\n  fi\n  sleep 10\ndone\n"),
            "OnFailure",
            10 * KUBELET_SECOND,
        ),
        # A server: the image's own entrypoint, or a pod restarted whatever happens.
        ({"image": "nginx:1.29"}, "Never", None),
        ({"image": "nginx:1.29", "command": [], "args": []}, "Never", None),
        (ECHO, "Always", None),
        # A test marker decides for itself.
        ({"image": "example/notready:1", "command": ["sh"]}, "Never", None),
    ],
)
def test_run_length_of_an_unmarked_container(
    spec: dict[str, Any], policy: str, seconds: float | None
) -> None:
    assert run_length({"name": "c", **spec}, policy) == (
        None if seconds is None else pytest.approx(seconds)
    )


def test_logs_of_a_finished_command_say_what_ran() -> None:
    job_pod = {
        "metadata": {"name": "hello-x", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "hello", **ECHO}]},
        "status": {"containerStatuses": [{"name": "hello", "state": RUNNING}]},
    }
    assert container_log(job_pod).splitlines()[1:] == [
        "2026-01-01T00:00:00.017Z INFO running sh -c echo hello"
    ]
    job_pod["status"]["containerStatuses"][0]["state"] = {
        "terminated": {"exitCode": 0, "startedAt": "2026-01-01T00:00:00Z"}
    }
    assert container_log(job_pod).splitlines()[1:] == [
        "2026-01-01T00:00:00.017Z INFO running sh -c echo hello",
        "2026-01-01T00:00:00.034Z INFO exiting with code 0",
    ]


FINISHED = {"exitCode": 0, "startedAt": "2026-01-01T00:00:00Z"}


def test_logs_of_a_script_over_lines_say_it_on_one() -> None:
    script = "while true; do\n  nslookup db && break\n  sleep 2\ndone\necho ready\n"
    job_pod = {
        "metadata": {"name": "wait-x", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "w", **shell(script)}]},
        "status": {"containerStatuses": [{"name": "w", "state": {"terminated": FINISHED}}]},
    }
    assert container_log(job_pod, tail_lines=2).splitlines() == [
        "2026-01-01T00:00:00.017Z INFO running sh -c while true; do nslookup db && break "
        "sleep 2 done echo ready",
        "2026-01-01T00:00:00.034Z INFO exiting with code 0",
    ]


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.15, "150ms"), (1.2, "1.2s"), (2.163, "2.163s"), (3.0, "3s")]
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def run_of(policy: str, *states: dict[str, Any]) -> PodRun:
    containers = []
    for i, state in enumerate(states):
        c = ContainerRun(spec={"name": f"c{i}", "image": "x"})
        c.state = state
        containers.append(c)
    return PodRun(("ns", "p"), "uid", "node-1", policy, [], containers)


TERMINATED_0 = {"terminated": {"exitCode": 0}}
TERMINATED_1 = {"terminated": {"exitCode": 1}}
RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
CREATING = {"waiting": {"reason": "ContainerCreating"}}


@pytest.mark.parametrize(
    ("policy", "states", "phase"),
    [
        ("Always", [CREATING], "Pending"),
        ("Always", [RUNNING, CREATING], "Pending"),
        ("Always", [RUNNING], "Running"),
        ("Never", [TERMINATED_0, TERMINATED_0], "Succeeded"),
        ("Never", [TERMINATED_0, TERMINATED_1], "Failed"),
        ("OnFailure", [TERMINATED_1], "Running"),  # it will restart
        ("OnFailure", [TERMINATED_0], "Succeeded"),
        ("Always", [TERMINATED_0], "Running"),
    ],
)
def test_phase(policy: str, states: list[dict[str, Any]], phase: str) -> None:
    assert run_of(policy, *states).phase() == phase


def pod(
    state: dict[str, Any], last: dict[str, Any] | None = None, restarts: int = 0
) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "crashloop:1"}]},
        "status": {
            "containerStatuses": [
                {"name": "app", "state": state, "lastState": last or {}, "restartCount": restarts}
            ]
        },
    }


def test_logs_of_a_running_container() -> None:
    text = container_log(pod({"running": {"startedAt": "2026-01-01T10:00:00Z"}}))
    lines = text.splitlines()
    assert (
        lines[0]
        == "2026-01-01T10:00:00.000Z INFO starting crashloop:1 (container app of pod default/web, run 1)"
    )
    assert lines[-1].endswith("INFO exiting with code 1")
    assert container_log(pod(RUNNING), tail_lines=1).count("\n") == 1
    stamped = container_log(pod(RUNNING), tail_lines=1, timestamps=True)
    assert stamped.startswith("2026-01-01T00:00:00.034000000Z ")


def test_logs_of_a_crash_looping_container_are_its_last_run() -> None:
    waiting = {"waiting": {"reason": "CrashLoopBackOff"}}
    last = {"terminated": {"exitCode": 1, "startedAt": "2026-01-01T10:00:05Z"}}
    assert "run 3)" in container_log(pod(waiting, last, restarts=2))
    assert "run 3)" in container_log(pod(waiting, last, restarts=2), previous=True)


@pytest.mark.parametrize(
    ("state", "kwargs", "message"),
    [
        ({"waiting": {"reason": "ContainerCreating"}}, {}, 'container "app" in pod "web" is waiting to start: ContainerCreating'),
        ({"waiting": {"reason": "ImagePullBackOff"}}, {}, 'container "app" in pod "web" is waiting to start: trying and failing to pull image'),
        (RUNNING, {"previous": True}, 'previous terminated container "app" in pod "web" not found'),
        (RUNNING, {"container": "nope"}, "container nope is not valid for pod web"),
    ],
)  # fmt: skip
def test_log_errors_use_the_kubelets_words(
    state: dict[str, Any], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(status.BadRequest) as caught:
        container_log(pod(state), **kwargs)
    assert caught.value.message == message
