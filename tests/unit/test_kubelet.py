"""The simulated kubelet's pure parts: image names, durations, phases, logs."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers import commands
from stackwright.localcluster.controllers.kubelet import (
    KUBELET_SECOND,
    RUN_TIME,
    TERMINAL,
    CommandRun,
    ContainerRun,
    Kubelet,
    PodRun,
    behaviour,
    container_log,
    go_duration,
    image_command,
    image_id,
    image_reference,
    run_length,
)
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.store import Change, Store


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


def brief(exit_code: int = 0) -> CommandRun:
    """A command over before the kubelet looks (no sleep of a kubelet second)."""
    return CommandRun(0.0, exit_code)


def slept(seconds: float, exit_code: int = 0) -> CommandRun:
    return CommandRun(max(RUN_TIME, seconds * KUBELET_SECOND), exit_code)


#: Programs the kubelet cannot know: servers, for all it can tell.
SERVERS = [
    {"image": "nginx:1.29", "command": ["nginx", "-g", "daemon off;"]},
    {"image": "python:3.13", "command": ["python", "-m", "http.server"]},
    {"image": "busybox", "command": ["httpd", "-f"]},
    shell("echo starting; exec nginx -g 'daemon off;'"),
    shell("nginx & echo started"),  # the shell ends, but only after starting what we cannot know
    shell('CONF=$(cat <<EOF\n{}\nEOF\n)\necho "$CONF" > /etc/app.json\nexec app'),  # its lines
    shell("echo $(curl -s config) > /etc/app.conf"),
    shell("env MODE=prod server"),
    shell("echo 'unclosed"),
    PI,
]
#: Programs reading a standard input that `stdin` (or a terminal, `tty`) keeps open: they
#: wait on it, whatever the pod's restartPolicy.
WAITING = [
    {**shell("cat"), "stdin": True},
    {"image": "busybox", "stdin": True},
    {"image": "ubuntu:24.04", "stdin": True, "tty": True},
    {"image": "python:3.13", "tty": True},
]


@pytest.mark.parametrize(
    ("spec", "policy", "run"),
    [
        # Run-to-completion work: a command in a pod that is not restarted once it succeeds.
        (ECHO, "Never", brief()),
        (PI, "OnFailure", brief()),
        ({"image": "registry.local/app:2", "args": ["migrate"]}, "Never", brief()),
        # `sleep N` runs N kubelet seconds (never less than RUN_TIME); with a unit too.
        ({"image": "busybox", "command": ["sleep", "30"]}, "Never", slept(30)),
        (shell("sleep 1m && echo done"), "Never", slept(60)),
        (shell("sleep 2; echo a; sleep 3"), "OnFailure", slept(5)),
        (shell("sleep 1"), "Never", slept(1)),
        (shell('sleep "30"'), "Never", slept(30)),  # quoted, as the shell reads it
        (shell("sleep '30'; echo done"), "Never", slept(30)),
        (shell("sleep 5 > /dev/null 2>&1"), "Never", slept(5)),
        # Top-level statements reached unconditionally decide the exit code.
        (shell("echo start; exit 3"), "Never", brief(3)),
        ({"image": "busybox", "command": ["false"]}, "OnFailure", brief(1)),
        (shell("false"), "Never", brief(1)),
        (shell("sleep 2\nexit 4\necho never"), "Never", slept(2, 4)),
        (shell("echo a &&\n  exit 6"), "Never", brief(6)),
        ({"image": "busybox", "command": ["sh", "-c"], "args": ["exit 2"]}, "Never", brief(2)),
        (shell("false; echo recovered"), "Never", brief(0)),  # the last status counts
        ({"image": "busybox", "command": ["sh", "-ec", "false; echo never"]}, "Never", brief(1)),
        (shell("set -e\nfalse\necho never"), "Never", brief(1)),
        # `-o NAME` takes the next word: the script still follows -c.
        (
            {"image": "bash:5", "command": ["bash", "-euo", "pipefail", "-c", "sleep 6; exit 2"]},
            "Never",
            slept(6, 2),
        ),
        (
            {"image": "busybox", "command": ["sh", "-o", "errexit", "-c", "false; echo"]},
            "Never",
            brief(1),
        ),
        ({"image": "busybox", "command": ["sh", "+x", "-c", "exit 4"]}, "Never", brief(4)),
        # A failure on a condition is not counted: the condition may not hold.
        (shell("migrate || exit 1"), "Never", brief(0)),
        (shell("if [ -f /done ]; then exit 1; fi"), "Never", brief(0)),
        (shell("test -f /done && exit 1"), "Never", brief(0)),
        (shell("case $MODE in bad) exit 1;; esac"), "Never", brief(0)),
        (shell("echo 'exit 5'; echo \"a; exit 5\" # exit 5"), "Never", brief(0)),
        # A here-document's lines are a program's input, not statements.
        (
            shell("cat <<EOF > /etc/app.conf\nexit 1\nwhile true; do :; done\nEOF\necho written"),
            "Never",
            brief(0),
        ),
        (shell("cat <<-'END' >/x\n\tdon't; sleep 9\n\tEND\nsleep 5; exit 2"), "Never", slept(5, 2)),
        (shell('cat << "EOF" | sh\nexit 1\nEOF\n'), "Never", brief(0)),
        # Never ends by itself: runs until stopped, as before.
        (shell("sleep infinity"), "Never", None),
        ({"image": "busybox", "args": ["tail", "-f", "/dev/null"]}, "Never", None),
        ({"image": "busybox", "command": ["tail", "-n0", "-f", "/var/log/app"]}, "Never", None),
        (shell("tail -f -n 0 /var/log/app"), "Never", None),
        (shell("touch /log; tail -F /log"), "OnFailure", None),
        (shell("while true; do date; sleep 5; done"), "OnFailure", None),
        (shell("while :; do date; done; exit 0"), "Never", None),  # the exit is past its done
        (shell("while sleep 5; do date; done"), "Never", None),
        (shell("until false; do date; sleep 5; done"), "Never", None),
        (shell("exec sleep infinity"), "Always", None),
        (shell("trap 'exit 0' TERM; sleep infinity & wait"), "Never", None),
        # `wait` waits for what runs in the background, no longer than it runs.
        (shell("sleep 30 & wait"), "Never", slept(30)),
        (shell("sleep 30 & sleep 40; wait; echo done"), "OnFailure", slept(40)),
        # A loop that leaves (break, exit) is a wait that ends: run to completion.
        (shell("while true; do nc -z db 5432 && break; sleep 2; done"), "Never", slept(2)),
        (shell("while true; do echo not done; sleep 1; break; done"), "Never", slept(1)),
        (shell("while sleep 2; do nc -z db 5432 && break; done"), "Never", slept(2)),
        (
            shell("while true\ndo\n  if ready; then\n    exit 0\n  fi\n  sleep 10\ndone\n"),
            "OnFailure",
            slept(10),
        ),
        # Always: a command that certainly ends, ends (and its pod restarts it) ...
        (ECHO, "Always", brief()),
        ({"image": "busybox", "command": ["false"]}, "Always", brief(1)),
        (shell("echo hi > /tmp/x 2>&1; date; sleep 30"), "Always", slept(30)),
        (
            shell("mkdir -p /data && cp /etc/hosts /data/ && cat /data/hosts; exit 3"),
            "Always",
            brief(3),
        ),
        # ... any program it cannot know may be a server, and so may the image's own.
        *[(server, "Always", None) for server in SERVERS],
        (shell("sleep 3600 && server"), "Always", None),
        (shell("if [ -f /x ]; then echo hi; fi"), "Always", None),
        ({"image": "nginx:1.29"}, "Never", None),
        # An image whose own command is a shell or a REPL reads its empty standard input:
        # it ends at once, and an Always pod restarts it.
        ({"image": "busybox:1.36"}, "Always", brief()),
        ({"image": "docker.io/library/alpine:3.20"}, "Never", brief()),
        ({"image": "python:3.13-slim", "command": [], "args": []}, "Always", brief()),
        (shell("cat"), "Always", brief()),
        ({"image": "busybox", "command": ["sh"]}, "Always", brief()),
        ({"image": "python:3.13", "command": ["python3", "-i"]}, "Always", brief()),
        ({"image": "php:8.3-fpm"}, "Always", None),  # php-fpm: a server
        *[(waiting, policy, None) for waiting in WAITING for policy in ("Always", "Never")],
        # Given another input, a reader reads that, not the container's.
        ({**shell("echo hi | cat"), "stdin": True}, "Never", brief()),
        ({**shell("cat <<EOF\nhello\nEOF\n"), "stdin": True}, "Always", brief()),
        ({**shell("sh < /app/run.sh"), "stdin": True}, "Never", brief()),
        ({"image": "nginx:1.29", "command": [], "args": []}, "Never", None),
        # A test marker decides for itself.
        ({"image": "example/notready:1", "command": ["sh"]}, "Never", None),
        ({"image": "example/crashloop:1", "command": ["echo", "hi"]}, "Always", None),
    ],
)
def test_run_length_of_an_unmarked_container(
    spec: dict[str, Any], policy: str, run: CommandRun | None
) -> None:
    got = run_length({"name": "c", **spec}, policy)
    assert got == (None if run is None else (pytest.approx(run.seconds), run.exit_code))


@pytest.mark.parametrize(
    ("image", "command"),
    [
        ("busybox", ["sh"]),
        ("docker.io/library/busybox:1.36", ["sh"]),
        ("busybox@sha256:" + "a" * 64, ["sh"]),
        ("busybox:1.36@sha256:" + "a" * 64, ["sh"]),
        ("public.ecr.aws/docker/library/alpine:3", ["sh"]),
        ("localhost:5000/ubuntu", ["bash"]),
        ("quay.io/centos/centos:stream9", ["bash"]),
        ("rockylinux/rockylinux:9", ["bash"]),
        ("amazonlinux:2023", ["bash"]),
        ("golang:1.23", ["bash"]),
        ("python:3.13-slim", ["python3"]),
        ("node:22", ["node"]),
        ("ruby:3.3", ["irb"]),
        ("perl:5.34.0", ["perl", "-de0"]),
        ("php:8.3-cli", ["php", "-a"]),
        ("openjdk:21", ["jshell"]),
        ("eclipse-temurin:21-jdk", ["jshell"]),
        ("erlang:27", ["erl"]),
        ("elixir:1.17", ["iex"]),
        ("archlinux", ["bash"]),
        ("julia:1.11", ["julia"]),
        ("r-base:4.4.2", ["R"]),
        ("haskell:9", ["ghci"]),
        ("pypy:3.10", ["pypy3"]),
        ("php:8.3-apache", []),
        ("php:fpm-alpine", []),
        ("python-app:1", []),
        ("example.com/busybox-server:1", []),
        ("nginx:1.29", []),
        ("alpine/git", []),  # an image of alpine's, not alpine
        # A user's own image named as an official one is theirs: as likely a server.
        ("myorg/python:3.12", []),
        ("ghcr.io/acme/node:1", []),
        ("registry.example.com/team/ubuntu:24.04", []),
        ("bitnami/python:3.12", []),
        ("mirror.gcr.io/library/busybox:1.36", ["sh"]),
        ("mirror.gcr.io/busybox", ["sh"]),
        ("registry.k8s.io/e2e-test-images/busybox:1.36.1-1", ["sh"]),
        ("localhost:5000/busybox:1.36", ["sh"]),
        ("localhost/busybox", ["sh"]),
    ],
)
def test_image_command_of_shell_and_repl_images(image: str, command: list[str]) -> None:
    assert image_command(image) == command


@pytest.mark.parametrize(
    ("image", "code"),
    [("openjdk:21", 0), ("erlang:27", 0), ("elixir:1.17", 0), ("julia:1.11", 0),
     ("haskell:9", 0), ("pypy:3", 0), ("archlinux", 0), ("r-base:4.4.2", 2)],
)  # fmt: skip
def test_a_repl_image_without_a_terminal_ends_at_once(image: str, code: int) -> None:
    # As `docker run IMAGE` without -it: the REPL reads an empty input and ends; R refuses
    # a session that is not interactive unless told what to do with it.
    assert run_length({"name": "c", "image": image}, "Always") == (0.0, code)
    told = {"name": "c", "image": "r-base", "command": ["R", "--no-save"]}
    assert run_length(told, "Always") == (0.0, 0)
    assert run_length({"name": "c", "image": image, "stdin": True}, "Always") is None


@pytest.mark.parametrize("server", SERVERS)
def test_a_batch_pods_program_it_cannot_know_ends_with_0(server: dict[str, Any]) -> None:
    assert run_length({"name": "c", **server}, "Never") == (0.0, 0)


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


def test_logs_of_a_failed_command_say_its_exit_code() -> None:
    failed = {"terminated": {**FINISHED, "exitCode": 3, "reason": "Error"}}
    job_pod = {
        "metadata": {"name": "fail-x", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "w", **shell("exit 3")}]},
        "status": {"containerStatuses": [{"name": "w", "state": failed}]},
    }
    assert container_log(job_pod, tail_lines=1).endswith("INFO exiting with code 3\n")


def test_logs_of_a_failed_init_container_say_what_it_ran_and_its_exit_code() -> None:
    failed = {"terminated": {**FINISHED, "exitCode": 3, "reason": "Error"}}
    web = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "initContainers": [{"name": "migrate", **shell("echo migrating; exit 3")}],
            "containers": [{"name": "web", "image": "nginx:1.29"}],
        },
        "status": {"initContainerStatuses": [{"name": "migrate", "state": failed}]},
    }
    lines = container_log(web, "migrate").splitlines()
    assert [line.partition("Z ")[2] for line in lines[1:]] == [
        "INFO running sh -c echo migrating; exit 3",
        "INFO exiting with code 3",
    ]


# --- the kubelet running pods, in process ------------------------------------------------------


def run_pod(
    restart_policy: str,
    container: dict[str, Any],
    until: Callable[[dict[str, Any]], bool],
    init: dict[str, Any] | None = None,
    earlier: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run one pod (with an `init` container, if given) on a node with the real Kubelet (10
    times faster) until its status satisfies `until`; every status it wrote, in order. With
    `earlier`, the pod has that status, as an earlier server process's kubelet left it."""
    cluster = Cluster(Store(":memory:"))
    nodes, pods = cluster.type_for("", "v1", "nodes"), cluster.type_for("", "v1", "pods")
    cluster.create(
        nodes, "", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}, WriteOptions()
    )
    statuses: list[dict[str, Any]] = []

    def seen(change: Change) -> None:
        if change.key == ("", "pods") and change.obj.get("status"):
            statuses.append(copy.deepcopy(change.obj["status"]))

    cluster.store.add_listener(seen)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "nodeName": "n1",
            "automountServiceAccountToken": False,  # no controller here makes its ConfigMap
            "restartPolicy": restart_policy,
            "containers": [{"name": "c", **container}],
            **({"initContainers": [{"name": "i", **init}]} if init else {}),
        },
    }

    async def scenario() -> None:
        if earlier is not None:
            made = cluster.create(pods, "default", body, WriteOptions()).obj
            cluster.update(
                pods, "default", "p", {**made, "status": earlier}, WriteOptions(), "status"
            )
            statuses.clear()
        kubelet = Kubelet(cluster, Pace(speed=10))
        task = asyncio.ensure_future(kubelet.run())
        try:
            if earlier is None:
                cluster.create(pods, "default", body, WriteOptions())
            deadline = asyncio.get_running_loop().time() + 5
            while not (statuses and until(statuses[-1])):
                assert asyncio.get_running_loop().time() < deadline, statuses[-1:]
                await asyncio.sleep(0.005)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    return statuses


def container_of(pod_status: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = (pod_status.get("containerStatuses") or [{}])[0]
    return found


def ready(pod_status: dict[str, Any]) -> bool:
    return bool(container_of(pod_status).get("ready"))


def waiting_reason(pod_status: dict[str, Any]) -> str:
    return str((container_of(pod_status).get("state", {}).get("waiting") or {}).get("reason"))


@pytest.mark.parametrize(
    ("script", "code", "reason"),
    [("echo hello", 0, "Completed"), ("echo start; exit 3", 3, "Error")],
)
def test_an_always_pods_command_that_ends_crash_loops_never_seen_running(
    script: str, code: int, reason: str
) -> None:
    """busybox's `echo hello` in a Deployment's pod ends at once and is restarted with
    back-off, as on a node: CrashLoopBackOff, a rising restartCount, the last run's exit in
    lastState. Over before the kubelet looks, it is never shown running, nor Ready."""
    statuses = run_pod(
        "Always", shell(script),
        lambda s: waiting_reason(s) == "CrashLoopBackOff" and container_of(s)["restartCount"] >= 2,
    )  # fmt: skip
    last = container_of(statuses[-1])["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (code, reason)
    assert statuses[-1]["phase"] == "Running"
    assert not any(ready(s) or "running" in container_of(s).get("state", {}) for s in statuses)


def test_an_always_pod_of_a_shell_image_without_a_command_crash_loops() -> None:
    """A Deployment of busybox without a command: its shell reads an empty standard input
    and exits 0, so it crash-loops (Completed), as on a node."""
    statuses = run_pod(
        "Always", {"image": "busybox:1.36"},
        lambda s: waiting_reason(s) == "CrashLoopBackOff" and container_of(s)["restartCount"] >= 2,
    )  # fmt: skip
    last = container_of(statuses[-1])["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (0, "Completed")
    assert not any(ready(s) for s in statuses)


def test_a_batch_pod_of_a_repl_image_without_a_command_succeeds_at_once() -> None:
    statuses = run_pod("Never", {"image": "python:3.13"}, lambda s: s["phase"] in TERMINAL)
    assert statuses[-1]["phase"] == "Succeeded"
    assert container_of(statuses[-1])["state"]["terminated"]["reason"] == "Completed"


def test_a_shell_image_with_stdin_waits_on_it_and_runs_on() -> None:
    statuses = run_pod("Always", {"image": "alpine:3", "stdin": True}, ready)
    assert "running" in container_of(statuses[-1])["state"]
    assert not any(container_of(s).get("restartCount") for s in statuses)


def test_logs_of_a_debug_container_say_what_it_runs() -> None:
    # `kubectl debug --image=nginx`: its image's own server, which serves as any container's
    # does (it said `running ` and nothing); `-it --image=busybox`: its shell, interactive.
    pod = {
        "metadata": {"name": "web-x", "namespace": "default"},
        "spec": {
            "containers": [{"name": "web", "image": "nginx:1.29"}],
            "ephemeralContainers": [
                {"name": "server", "image": "nginx:1.29"},
                {"name": "shell", "image": "busybox:1.36", "stdin": True, "tty": True},
            ],
        },
        "status": {
            "ephemeralContainerStatuses": [
                {"name": "server", "state": RUNNING},
                {"name": "shell", "state": RUNNING},
            ]
        },
    }
    assert container_log(pod, "server", tail_lines=2).splitlines() == [
        "2026-01-01T00:00:00.017Z INFO listening on 0.0.0.0:8080",
        "2026-01-01T00:00:00.034Z INFO ready to serve requests",
    ]
    assert container_log(pod, "shell", tail_lines=1) == "2026-01-01T00:00:00.017Z INFO running sh\n"


def test_logs_of_a_shell_image_without_a_command_say_its_shell_ran() -> None:
    deployment_pod = {
        "metadata": {"name": "web-x", "namespace": "default"},
        "spec": {"containers": [{"name": "box", "image": "busybox:1.36"}]},
        "status": {"containerStatuses": [{"name": "box", "state": {"terminated": FINISHED}}]},
    }
    assert container_log(deployment_pod, tail_lines=2).splitlines() == [
        "2026-01-01T00:00:00.017Z INFO running sh",
        "2026-01-01T00:00:00.034Z INFO exiting with code 0",
    ]


def test_a_batch_pods_failing_command_fails_the_pod_with_its_code() -> None:
    statuses = run_pod("Never", shell("echo start; exit 3"), lambda s: s["phase"] in TERMINAL)
    terminated = container_of(statuses[-1])["state"]["terminated"]
    assert (statuses[-1]["phase"], terminated["exitCode"], terminated["reason"]) == (
        "Failed",
        3,
        "Error",
    )


def test_a_batch_pods_failing_command_restarts_on_failure() -> None:
    statuses = run_pod("OnFailure", {"image": "busybox", "command": ["false"]},
                       lambda s: waiting_reason(s) == "CrashLoopBackOff")  # fmt: skip
    assert container_of(statuses[-1])["lastState"]["terminated"]["exitCode"] == 1


def test_a_running_batch_container_with_a_readiness_probe_is_ready_while_it_runs() -> None:
    probe = {"exec": {"command": ["true"]}, "initialDelaySeconds": 2}
    statuses = run_pod(
        "Never", {**shell("sleep 30"), "readinessProbe": probe}, lambda s: s["phase"] in TERMINAL
    )
    assert any(ready(s) and "running" in container_of(s)["state"] for s in statuses)
    assert statuses[-1]["phase"] == "Succeeded" and not ready(statuses[-1])


def test_an_always_pods_finite_command_is_ready_while_it_runs_then_restarts() -> None:
    statuses = run_pod(
        "Always",
        shell("sleep 10; echo done"),
        lambda s: container_of(s).get("restartCount", 0) >= 1,
    )
    assert any(ready(s) for s in statuses)
    last = container_of(statuses[-1])["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (0, "Completed")


def test_a_restarts_count_goes_up_as_its_new_run_starts() -> None:
    """A kubelet counts the runs that have ended as the next starts: an ended run is shown
    with the count it ran under (kubectl logs names it by that count, and `logs -f` finds
    its end there). The count went up while the ended run was still shown, so `logs -f` of
    a Deployment's container that ended and restarted at once stopped without its exit line."""
    statuses = run_pod(
        "Always", shell("sleep 10; exit 3"), lambda s: container_of(s).get("restartCount", 0) >= 2
    )
    runs: dict[int, set[str]] = {}
    for s in statuses:
        state = container_of(s).get("state") or {}
        shown = state.get("running") or state.get("terminated")
        if shown is not None and container_of(s).get("containerID"):
            runs.setdefault(container_of(s)["restartCount"], set()).add(
                container_of(s)["containerID"]
            )
    assert all(len(ids) == 1 for ids in runs.values()), runs
    assert sorted(runs)[:2] == [0, 1]


def test_a_container_waiting_to_restart_keeps_its_count_across_a_server_restart() -> None:
    """A kubelet's restart counts the ended runs still: the count went back to 0, and the
    last run's exit was forgotten, for a container in back-off when the server stopped."""
    ended = {
        "exitCode": 3,
        "reason": "Error",
        "containerID": "containerd://" + "a" * 64,
        "startedAt": "2026-01-01T00:00:00Z",
        "finishedAt": "2026-01-01T00:00:01Z",
    }
    back_off = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}}
    earlier = {"phase": "Running", "containerStatuses": [{
        "name": "c", "image": "busybox:1.36", "imageID": "docker.io/library/busybox@sha256:1",
        "ready": False, "started": False, "restartCount": 3, "state": back_off,
        "lastState": {"terminated": ended},
    }]}  # fmt: skip
    statuses = run_pod(
        "Always", shell("sleep 30"), lambda s: "running" in container_of(s).get("state", {}),
        earlier=earlier,
    )  # fmt: skip
    assert container_of(statuses[-1])["restartCount"] == 4
    assert container_of(statuses[-1])["lastState"] == {"terminated": ended}


def init_of(pod_status: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = (pod_status.get("initContainerStatuses") or [{}])[0]
    return found


def test_an_init_containers_failing_command_fails_a_batch_pod() -> None:
    """As on a node: `exit 3` in an init container fails a Never pod (Init:Error), and its
    containers never start (it used to complete, whatever its command said)."""
    statuses = run_pod(
        "Never", ECHO, lambda s: s["phase"] in TERMINAL, init=shell("echo migrating; exit 3")
    )
    terminated = init_of(statuses[-1])["state"]["terminated"]
    assert (statuses[-1]["phase"], terminated["exitCode"], terminated["reason"]) == (
        "Failed",
        3,
        "Error",
    )
    assert not any("running" in container_of(s).get("state", {}) for s in statuses)


def test_an_init_containers_failing_command_crash_loops_in_an_always_pod() -> None:
    statuses = run_pod(
        "Always",
        {"image": "nginx:1.29"},
        lambda s: (
            (init_of(s).get("state", {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff"
        ),
        init={"image": "busybox", "command": ["false"]},
    )
    assert init_of(statuses[-1])["lastState"]["terminated"]["exitCode"] == 1
    assert not any(ready(s) for s in statuses)


def test_an_init_containers_finite_command_completes_then_the_pod_runs() -> None:
    began = time.monotonic()
    statuses = run_pod("Always", {"image": "nginx:1.29"}, ready, init=shell("sleep 60; echo ok"))
    assert time.monotonic() - began >= 60 * KUBELET_SECOND / 10, "as long as its sleep"
    terminated = init_of(statuses[-1])["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")


@pytest.mark.parametrize("sidecar", [{"image": "busybox"}, shell("echo proxying; exit 2")])
def test_a_sidecar_whose_command_ends_crash_loops_and_the_pod_runs_on(
    sidecar: dict[str, Any],
) -> None:
    """A native sidecar (an init container restarted always) whose command surely ends, or
    a shell image's without one, is restarted with back-off as a kubelet restarts it; the
    pod's containers run meanwhile."""
    statuses = run_pod(
        "Always", {"image": "nginx:1.29"},
        lambda s: ready(s) and init_of(s).get("restartCount", 0) >= 2,
        init={**sidecar, "restartPolicy": "Always"},
    )  # fmt: skip
    code = 2 if "command" in sidecar else 0
    assert init_of(statuses[-1])["lastState"]["terminated"]["exitCode"] == code


def conditions_of(pod_status: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in pod_status.get("conditions") or []}


def test_a_pod_whose_sidecar_crash_loops_stays_initialized_and_is_not_ready() -> None:
    """As a kubelet's: the pod's containers started, so it was initialized (kubectl shows it
    Running, not Init:CrashLoopBackOff); it is not Ready while its sidecar is not."""
    statuses = run_pod(
        "Always", {"image": "nginx:1.29"},
        lambda s: ready(s) and init_of(s).get("restartCount", 0) >= 2
        and "waiting" in init_of(s)["state"],
        init={**shell("echo proxying; exit 2"), "restartPolicy": "Always"},
    )  # fmt: skip
    last = statuses[-1]
    assert "running" in container_of(last)["state"]
    assert init_of(last)["started"] is False
    assert conditions_of(last) | {"PodScheduled": "True"} == {
        "PodReadyToStartContainers": "True",
        "Initialized": "True",
        "Ready": "False",
        "ContainersReady": "False",
        "PodScheduled": "True",
    }


def test_a_sidecar_that_idles_runs_until_stopped() -> None:
    statuses = run_pod(
        "Always", {"image": "nginx:1.29"}, ready,
        init={"image": "busybox", "command": ["sleep", "infinity"], "restartPolicy": "Always"},
    )  # fmt: skip
    assert "running" in init_of(statuses[-1])["state"]
    assert not any(init_of(s).get("restartCount") for s in statuses)


# --- reading commands: properties ------------------------------------------------------------

STATEMENTS = st.sampled_from(["echo hi", "echo 'a; exit 9'", "date", "true", "sleep 2", "ls /"])
JOINS = st.sampled_from(["; ", "\n", " && ", " ;\n  "])


@given(st.text(max_size=60))
def test_any_script_is_read_without_error(script: str) -> None:
    outcome = commands.read(["sh", "-c", script])
    assert 0 <= outcome.exit_code <= 255 and outcome.seconds >= 0


@given(
    st.lists(STATEMENTS, max_size=4), st.lists(JOINS, min_size=5, max_size=5), st.integers(0, 255)
)
def test_the_first_unconditional_exit_decides_the_code(
    before: list[str], joins: list[str], code: int
) -> None:
    statements = [*before, f"exit {code}", "exit 7"]
    script = "".join(s + j for s, j in zip(statements, joins, strict=False)) + statements[-1]
    outcome = commands.read(["sh", "-c", script])
    assert (outcome.exit_code, outcome.certain, outcome.ends) == (code, True, True)
    assert outcome.seconds == 2 * before.count("sleep 2")


@given(
    st.lists(STATEMENTS, max_size=3), st.sampled_from(["cmd || ", "test -f x && ", "[ -f x ] && "])
)
def test_an_exit_on_a_condition_is_not_counted(before: list[str], condition: str) -> None:
    script = "; ".join([*before, f"{condition}exit 3"])
    assert commands.read(["sh", "-c", script]).exit_code == 0


@given(st.lists(st.text(st.characters(exclude_characters="\n")), max_size=4), st.integers(0, 255))
def test_a_here_documents_lines_are_never_statements(lines: list[str], code: int) -> None:
    body = "".join(f"{line}\n" for line in lines if line != "EOF")
    outcome = commands.read(["sh", "-c", f"cat > /etc/conf <<EOF\n{body}EOF\nexit {code}"])
    assert (outcome.exit_code, outcome.ends, outcome.seconds) == (code, True, 0)
