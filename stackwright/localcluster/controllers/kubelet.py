"""The simulated kubelets: run the pods bound to every healthy node, on paper.

A bound pod goes Pending (ContainerCreating, with a pod IP from its node's pod
CIDR) → init containers one by one → its containers are pulled, created and
started → Running, and Ready once its readiness probe's initialDelaySeconds
have passed (at once without a probe). Status is written the way kubelet 1.33
writes it — phase, the five pod conditions with transition times, hostIP(s),
podIP(s), startTime, init and container statuses with image, imageID,
containerID, ready, started, restartCount, state and lastState — and so are the
Events (Pulling, Pulled, Created, Started, Killing, BackOff, Failed, Unhealthy,
FailedMount). Deleting a pod is graceful: Killing, the containers stop, the
final status is written, then the pod is torn down and removed.

What a container does is chosen by its image NAME (documented in the README):

    contains `doesnotexist`  the pull fails: ErrImagePull, then ImagePullBackOff
                             (`Back-off pulling image "…"`), retried with back-off
    contains `crashloop`     runs, exits 1 (Error), restarts with back-off:
                             CrashLoopBackOff with a rising restartCount
    contains `exit1`         runs, exits 1; `exit0` runs, exits 0 — the pod's
                             restartPolicy decides what follows (Never: the pod is
                             Failed / Succeeded; OnFailure restarts exit1; Always both)
    contains `notready`      runs and is never Ready (Unhealthy events when it has a
                             readiness probe)
    anything else            runs and is healthy (an init container completes); a
                             container given a command or args runs it as busybox's sh
                             would, as far as reading it tells: it may end, with the code its
                             `exit N` / `false` gives (see `command_run`; an init
                             container's always ends unless endless, a sidecar's as a
                             restartPolicy Always container's);
                             so does one without, whose image's own command is a shell or
                             a REPL (busybox, ubuntu, python…): it ends at once unless
                             `stdin` or `tty` keeps its input open

Missing ConfigMaps / Secrets keep a pod in ContainerCreating (FailedMount) or a
container in CreateContainerConfigError, and unbound claims hold it until bound,
as on a real node.

Time: image pulls, starts and runs are short base durations; the durations a
real kubelet counts in seconds (probe delays and periods, restart and pull
back-offs — 10 s doubling to 300 s —, grace periods) count KUBELET_SECOND base
seconds each. All of it is divided by the cluster's --speed.

Must never: write a pod's status after its node failed or after it was removed,
or let two runs of one pod live at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import ipaddress
import logging
import secrets
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, timestamp
from stackwright.localcluster.controllers import commands
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.events import NORMAL, WARNING, EventRecorder
from stackwright.localcluster.controllers.nodes import is_failed
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.store import DELETED, Change, Obj

log = logging.getLogger("stackwright.localcluster")

PODS = ("", "pods")
NODES = ("", "nodes")
CLAIMS = ("", "persistentvolumeclaims")
CONFIGMAPS = ("", "configmaps")
SECRETS = ("", "secrets")
KUBELET = "kubelet"

# Base seconds (divided by --speed) of the kubelet's simulated work.
PULL_TIME = 0.15  # pulling an image not yet on the node
START_TIME = 0.05  # creating and starting a container
RUN_TIME = 0.2  # how long crashloop / exit0 / exit1 and a batch container's command run
INIT_RUN_TIME = 0.05  # how long a healthy init container runs
ERR_PULL_SHOWN = 0.1  # ErrImagePull is shown this long before ImagePullBackOff
STOP_TIME = 0.1  # the longest a container takes to stop after SIGTERM
#: From a stopped pod's final status to its removal: the sandbox torn down, volumes
#: unmounted, then the status manager's delete — a real kubelet takes a second or two even
#: when no container ran. kubectl before 1.36 depends on it: `kubectl delete` GETs the pod,
#: then LISTs it by name and waits for a DELETED from that list, and a pod removed and
#: recreated (a StatefulSet's) in between leaves it waiting forever (kubectl#1803).
TEARDOWN_TIME = 0.1
#: One second of the time a real kubelet counts (probe delays and periods, back-offs,
#: grace periods), in base seconds: 20 times faster than real at speed 1.
KUBELET_SECOND = 0.05
BACKOFF_START, BACKOFF_MAX = 10, 300  # kubelet's restart and image pull back-off, seconds
WAIT_RETRY = 0.1  # polling for claims, config maps and secrets, base seconds

TERMINAL = ("Succeeded", "Failed")
PodKey = tuple[str, str]


# --- images --------------------------------------------------------------------------------


def behaviour(image: str) -> str:
    """The documented test behaviour an image name selects."""
    name = image.lower()
    for marker in ("doesnotexist", "crashloop", "exit1", "exit0", "notready"):
        if marker in name:
            return marker
    return "healthy"


#: The default command of official images that run a shell or an interpreter's REPL, by
#: their repository's name: without a TTY it reads its empty standard input and ends at once
#: (`commands.READERS`). Any other image's own entrypoint is a server here.
IMAGE_COMMANDS: dict[str, list[str]] = {
    **{image: ["sh"] for image in ("busybox", "alpine")},
    **{image: ["bash"] for image in ("ubuntu", "debian", "fedora", "centos", "rockylinux",
                                     "almalinux", "amazonlinux", "archlinux", "bash", "golang")},
    "python": ["python3"], "pypy": ["pypy3"], "node": ["node"], "ruby": ["irb"],
    "perl": ["perl", "-de0"], "php": ["php", "-a"],
    # The JDK images' CMD (a JRE tag has none, and runs its base's shell: it ends alike).
    **{image: ["jshell"] for image in ("openjdk", "eclipse-temurin")},
    "erlang": ["erl"], "elixir": ["iex"], "julia": ["julia"], "r-base": ["R"],
    "haskell": ["ghci"],
}  # fmt: skip
#: Tags of those images whose command is a server: php's `-fpm` and `-apache` variants.
SERVER_TAGS = {"php": ("fpm", "apache")}
#: Owners under which an image named as an official one is that image (or a copy of it):
#: Docker Hub's `library/`, ECR Public's mirror of it, Kubernetes' own copies of busybox.
#: `rockylinux/rockylinux`, `quay.io/centos/centos` (the owner is the name) are the
#: projects' own. Under any other owner it is a user's image of that name
#: (`myorg/python`), as likely a server as any.
OFFICIAL_OWNERS = frozenset(
    {"", "library", "docker/library", "e2e-test-images", "google_containers", "google-containers"}
)


def _registry_host(first: str) -> bool:
    """Whether the first part of an image's name (before a `/`) is a registry's host
    (`ghcr.io`, `localhost:5000`, `localhost`) rather than an owner (`myorg`), as
    containerd's reference parsing tells them apart."""
    return "." in first or ":" in first or first == "localhost"


def image_command(image: str) -> list[str]:
    """The command an official image runs by itself, as far as IMAGE_COMMANDS knows it; []
    for a server. `docker.io/library/busybox:1.36`, `busybox@sha256:…`, `localhost:5000/ubuntu`
    are the official images'; `python-app` and `myorg/python` are not."""
    name = image.partition("@")[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = name[colon + 1 :] if colon > slash else ""
    path = (name[:colon] if colon > slash else name).split("/")
    if len(path) > 1 and _registry_host(path[0]):
        path = path[1:]  # Docker Hub, a mirror of it, a local registry
    repository, owner = path[-1], "/".join(path[:-1])
    if owner not in OFFICIAL_OWNERS and owner != repository:
        return []
    if any(marker in tag for marker in SERVER_TAGS.get(repository, ())):
        return []
    return IMAGE_COMMANDS.get(repository, [])


def _words(spec: Obj) -> list[str]:
    """What a container runs, word by word: its command and args, else its image's own
    command (`image_command`; empty when that is a server)."""
    words = [str(word) for word in [*(spec.get("command") or []), *(spec.get("args") or [])]]
    return words or image_command(str(spec.get("image", "")))


def _reading(spec: Obj, words: list[str] | None = None) -> commands.Outcome:
    """How what a container runs (`words`, when its caller has them) ends, as far as reading
    it tells; its standard input is kept open by `stdin: true` or `tty: true`, else empty."""
    words = _words(spec) if words is None else words
    return commands.read(words, stdin=bool(spec.get("stdin") or spec.get("tty")))


def command_line(spec: Obj) -> str:
    """What a container runs as one line; empty when its image's own is a server."""
    return " ".join(_words(spec))


class CommandRun(NamedTuple):
    """How an unmarked container's command runs: base seconds, then the code it exits with."""

    #: 0: over before the kubelet first looks (no `sleep` of a kubelet second), so it is
    #: never seen running, nor Ready — as a real kubelet's once-a-second relist misses it.
    seconds: float
    exit_code: int


def run_length(spec: Obj, restart_policy: str) -> CommandRun | None:
    """How an unmarked container's command runs, or None: it runs until stopped.

    The command (and args) is read as busybox's sh would run it (`commands.read`). In a pod
    not restarted when it succeeds (restartPolicy Never or OnFailure, as a Job's) it is
    run-to-completion work: it ends, with the code its top-level `false` / `exit N` gives
    (0 otherwise), unless it never ends by itself (`sleep infinity`, `tail -f`, an endless
    loop). In a pod restarted whatever happens (Always: a Deployment's, a StatefulSet's) it
    ends only when it certainly does: every statement it may run is a word the reader
    knows to end (`echo hello`, `sleep 5`, `exit 1`); any other program may be a server.
    It runs as long as its `sleep`s add up to in kubelet seconds (at least RUN_TIME). A
    container without a command or args runs its image's own (`_words`): a shell or a REPL
    reading its standard input, which ends at once unless `stdin` or `tty` keeps it open,
    or a server."""
    words = _words(spec)
    if not words or behaviour(str(spec.get("image", ""))) != "healthy":
        return None
    outcome = _reading(spec, words)
    if not outcome.ends or (restart_policy == "Always" and not outcome.certain):
        return None
    seconds = max(RUN_TIME, outcome.seconds * KUBELET_SECOND) if outcome.seconds >= 1 else 0.0
    return CommandRun(seconds, outcome.exit_code)


def command_run(
    spec: Obj, restart_policy: str, *, init: bool = False, ephemeral: bool = False
) -> CommandRun | None:
    """How a container's command runs (see `run_length`), or None: until stopped. An init
    container's runs to completion whatever the pod's policy; a sidecar's (an init container
    restarted always) as a container's restarted always: one that surely ends crash-loops, as
    a kubelet restarts it. An ephemeral container's (`kubectl debug`) reading its stdin runs
    until stopped, its shell being interactive; one without runs once, as a batch
    container's."""
    if init and spec.get("restartPolicy") == "Always":
        return run_length(spec, "Always")
    if ephemeral:
        return None if spec.get("stdin") else run_length(spec, "Never")
    return run_length(spec, "Never" if init else restart_policy)


def image_reference(image: str) -> str:
    """The fully qualified reference containerd reports: `nginx:1.29` → `docker.io/library/nginx:1.29`."""
    name, at, digest = image.partition("@")
    first, slash, _rest = name.partition("/")
    if not slash:
        name = f"docker.io/library/{name}"
    elif not _registry_host(first):
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and not at:
        name += ":latest"
    return f"{name}@{digest}" if at else name


def image_id(image: str) -> str:
    """A stable digest per image, as `imageID` shows it."""
    ref = image_reference(image)
    repository = ref.split("@")[0] if "@" in ref else ref.rsplit(":", 1)[0]
    digest = hashlib.sha256(ref.encode()).hexdigest()
    return f"{repository}@sha256:{digest}"


def _image_size(image: str) -> int:
    return 20_000_000 + int(hashlib.sha256(image.encode()).hexdigest()[:8], 16) % 100_000_000


def go_duration(seconds: float) -> str:
    """A duration as Go prints one truncated to milliseconds: `150ms`, `1.2s`."""
    millis = int(seconds * 1000)
    if millis < 1000:
        return f"{millis}ms"
    whole, frac = divmod(millis, 1000)
    return f"{whole}.{frac:03d}".rstrip("0").rstrip(".") + "s"


def _backoff(attempt: int) -> float:
    """Kubelet seconds before retry `attempt` (1-based): 10, 20, 40 … 300."""
    return float(min(BACKOFF_START * 2 ** max(attempt - 1, 0), BACKOFF_MAX))


def _micro(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- a pod's run ------------------------------------------------------------------------------


@dataclass
class ContainerRun:
    spec: Obj
    init: bool = False
    #: A debug container `kubectl debug` added to a running pod: never ready, never restarted.
    ephemeral: bool = False
    state: Obj = field(default_factory=dict)
    last_state: Obj = field(default_factory=dict)
    ready: bool = False
    started: bool = False
    restart_count: int = 0
    container_id: str = ""
    pulled: bool = False
    #: Taken over running from an earlier server process: no pull, no start.
    resumed: bool = False
    crashes: int = 0

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def image(self) -> str:
        return str(self.spec.get("image", ""))

    @property
    def sidecar(self) -> bool:
        return self.init and self.spec.get("restartPolicy") == "Always"

    @property
    def field_path(self) -> str:
        if self.ephemeral:
            return f"spec.ephemeralContainers{{{self.name}}}"
        return f"spec.{'initContainers' if self.init else 'containers'}{{{self.name}}}"

    @property
    def running(self) -> bool:
        return "running" in self.state

    @property
    def exit_code(self) -> int | None:
        terminated = self.state.get("terminated")
        return int(terminated.get("exitCode", 0)) if terminated else None

    @property
    def done(self) -> bool:
        """For init containers: finished (or, for a sidecar, started) so the next may run."""
        if self.sidecar:
            return self.started or self.running
        return self.exit_code == 0

    def status(self) -> Obj:
        out: Obj = {
            "name": self.name,
            "image": image_reference(self.image) if self.pulled else self.image,
            "imageID": image_id(self.image) if self.pulled else "",
            "ready": self.ready,
            "restartCount": self.restart_count,
            "started": self.started,
            "state": self.state,
            "lastState": self.last_state,
        }
        if self.container_id:
            out["containerID"] = self.container_id
        return out


@dataclass
class PodRun:
    key: PodKey
    uid: str
    node: str
    restart_policy: str
    init: list[ContainerRun]
    containers: list[ContainerRun]
    ephemeral: list[ContainerRun] = field(default_factory=list)
    host_ip: str = ""
    ip: str = ""
    start_time: str = ""
    task: asyncio.Task[None] | None = None
    children: list[asyncio.Task[Any]] = field(default_factory=list)
    stopping: bool = False
    halted: bool = False
    flush_pending: bool = False
    #: A regular init container failed for good (restartPolicy Never): the pod failed.
    init_failed: bool = False
    #: hostNetwork pods share their node's address.
    host_network: bool = False

    @property
    def everything(self) -> list[ContainerRun]:
        return self.init + self.containers + self.ephemeral

    @property
    def initialized(self) -> bool:
        return all(c.done for c in self.init)

    def phase(self) -> str:
        """The kubelet's getPhase over this run's containers."""
        if self.init_failed:
            return "Failed"
        if not self.initialized and not self.stopping:
            return "Pending"
        running = stopped = succeeded = waiting = 0
        for c in self.containers:
            if c.running:
                running += 1
            elif c.exit_code is not None:
                stopped += 1
                succeeded += c.exit_code == 0
            elif c.last_state.get("terminated"):
                stopped += 1
            else:
                waiting += 1
        if self.stopping and not running and not waiting:
            return "Succeeded" if stopped == succeeded else "Failed"
        if waiting:
            return "Pending"
        if running:
            return "Running"
        if stopped:
            if self.restart_policy == "Always":
                return "Running"
            if stopped == succeeded:
                return "Succeeded"
            if self.restart_policy == "Never":
                return "Failed"
            return "Running"
        return "Pending"


def _resumed(c: ContainerRun, seen: Obj | None) -> ContainerRun:
    """`c` taking over what its status from an earlier server process says already ran."""
    state = (seen or {}).get("state") or {}
    if seen and ("running" in state or "terminated" in state):
        c.state = state
        c.last_state = seen.get("lastState") or {}
        c.ready = bool(seen.get("ready"))
        c.started = bool(seen.get("started"))
        c.restart_count = int(seen.get("restartCount") or 0)
        c.crashes = c.restart_count  # the back-off goes on where it was
        c.container_id = seen.get("containerID", "")
        c.pulled = bool(seen.get("imageID"))
        c.resumed = "running" in state
    else:
        c.state = {"waiting": {"reason": "ContainerCreating"}}
        if seen and seen.get("lastState"):  # waiting to restart: its ended runs still count
            c.last_state = seen["lastState"]
            c.restart_count = c.crashes = int(seen.get("restartCount") or 0)
    return c


def _config_problem(spec: Obj, namespace: str, store: Any) -> str:
    """Why a container's environment cannot be built yet (a missing source or key), or ""."""
    for var in spec.get("env") or []:
        source = var.get("valueFrom") or {}
        for ref_key, kind, label in (
            ("configMapKeyRef", CONFIGMAPS, "configmap"),
            ("secretKeyRef", SECRETS, "secret"),
        ):
            ref = source.get(ref_key)
            if not ref or ref.get("optional"):
                continue
            obj = store.get(kind, namespace, ref.get("name", ""))
            if obj is None:
                return f'{label} "{ref.get("name", "")}" not found'
            data = {**(obj.get("data") or {}), **(obj.get("binaryData") or {})}
            if ref.get("key") not in data:
                kind_name = "ConfigMap" if kind == CONFIGMAPS else "Secret"
                return f"couldn't find key {ref.get('key')} in {kind_name} {namespace}/{ref.get('name', '')}"
    for source in spec.get("envFrom") or []:
        for ref_key, kind, label in (
            ("configMapRef", CONFIGMAPS, "configmap"),
            ("secretRef", SECRETS, "secret"),
        ):
            ref = source.get(ref_key)
            if (
                ref
                and not ref.get("optional")
                and store.get(kind, namespace, ref.get("name", "")) is None
            ):
                return f'{label} "{ref.get("name", "")}" not found'
    return ""


def _missing_volume(pod: Obj, store: Any) -> tuple[str, str, bool]:
    """(volume, problem, quiet) for the first volume that cannot be mounted yet."""
    namespace = pod["metadata"].get("namespace", "")
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = volume.get("name", "")
        claim = volume.get("persistentVolumeClaim")
        if claim:
            found = store.get(CLAIMS, namespace, claim.get("claimName", ""))
            if found is None or (found.get("status") or {}).get("phase") != "Bound":
                return name, "claim not bound", True
        sources: list[tuple[str, Obj]] = []
        if volume.get("configMap"):
            sources.append(("configMap", volume["configMap"]))
        if volume.get("secret"):
            sources.append(
                ("secret", {**volume["secret"], "name": volume["secret"].get("secretName", "")})
            )
        for projected in (volume.get("projected") or {}).get("sources") or []:
            for kind in ("configMap", "secret"):
                if projected.get(kind):
                    sources.append((kind, projected[kind]))
        for kind, ref in sources:
            if ref.get("optional"):
                continue
            key = CONFIGMAPS if kind == "configMap" else SECRETS
            if store.get(key, namespace, ref.get("name", "")) is None:
                label = "configmap" if kind == "configMap" else "secret"
                return name, f'{label} "{ref.get("name", "")}" not found', False
    return "", "", False


class Kubelet(Controller):
    """Every healthy node's kubelet, in one work queue."""

    name = "kubelet"

    def __init__(self, cluster: Cluster, pace: Pace | None = None) -> None:
        self.pace = pace or Pace()
        self._pods = cluster.type_for("", "v1", "pods")
        self._runs: dict[PodKey, PodRun] = {}
        self._on_node: dict[str, set[PodKey]] = {}
        self._ip_of: dict[PodKey, tuple[str, str]] = {}
        self._used_ips: dict[str, set[str]] = {}
        self._next_host: dict[str, int] = {}
        self._images: dict[str, set[str]] = {}
        self._recorders: dict[str, EventRecorder] = {}
        super().__init__(cluster)
        for pod in cluster.store.items(PODS):
            key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                self._on_node.setdefault(node, set()).add(key)
            ip = (pod.get("status") or {}).get("podIP")
            host_network = (pod.get("spec") or {}).get("hostNetwork")
            if (
                node
                and ip
                and not host_network
                and (pod.get("status") or {}).get("phase") not in TERMINAL
            ):
                self._ip_of[key] = (node, ip)
                self._used_ips.setdefault(node, set()).add(ip)

    # --- reacting -------------------------------------------------------------------------

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == PODS:
            key = (change.namespace, change.name)
            old_node = ((change.old or {}).get("spec") or {}).get("nodeName")
            if change.type == DELETED:
                self._release_ip(key)
                if old_node:
                    self._on_node.get(old_node, set()).discard(key)
                return [("pod", *key)] if key in self._runs else []
            node = (change.obj.get("spec") or {}).get("nodeName")
            if not node:
                return []
            self._on_node.setdefault(node, set()).add(key)
            if (change.obj.get("status") or {}).get("phase") in TERMINAL and key not in self._runs:
                self._release_ip(key)
            return [("pod", *key)]
        if change.key == NODES and (
            change.type == DELETED
            or change.old is None
            or is_failed(change.old) != is_failed(change.obj)
        ):
            return [("node", change.name)]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [("pod", *key) for keys in self._on_node.values() for key in sorted(keys)]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        if key[0] == "node":
            for pod_key in sorted(self._on_node.get(key[1], ())):
                self.enqueue(("pod", *pod_key))
            return
        self._reconcile_pod((key[1], key[2]))

    def _serves(self, node: str) -> bool:
        return not is_failed(self.cluster.store.get(NODES, "", node))

    def _reconcile_pod(self, key: PodKey) -> None:
        pod = self.cluster.store.get(PODS, *key)
        run = self._runs.get(key)
        if run is not None and (pod is None or pod["metadata"].get("uid") != run.uid):
            self._halt(run)
            run = None
        if pod is None:
            return
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        if not self._serves(node):
            if run is not None:
                self._halt(run)  # the node is down: its kubelet writes nothing more
            return
        if pod["metadata"].get("deletionTimestamp"):
            if run is None:
                run = self._adopt(pod)
            if not run.stopping:
                run.stopping = True
                self._cancel(run)
                run.task = asyncio.ensure_future(self._stop(run))
            return
        if run is not None:
            if (pod.get("spec") or {}).get("readinessGates"):
                self._touch(run)  # a gate's condition may have changed: Ready follows it
            self._start_debug_containers(run, pod)
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            return
        run = self._adopt(pod)
        run.task = asyncio.ensure_future(self._live(run))
        self._start_debug_containers(run, pod)

    def _start_debug_containers(self, run: PodRun, pod: Obj) -> None:
        """Start the ephemeral containers added since the run began (or resume them)."""
        known = {c.name for c in run.ephemeral}
        seen = {
            s.get("name"): s
            for s in (pod.get("status") or {}).get("ephemeralContainerStatuses") or []
        }
        for spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            if spec.get("name") in known:
                continue
            c = _resumed(ContainerRun(spec=spec, ephemeral=True), seen.get(spec.get("name")))
            run.ephemeral.append(c)
            if c.exit_code is None:
                run.children.append(asyncio.ensure_future(self._container(run, c)))
        if len(run.ephemeral) > len(known):
            self._touch(run)

    def _adopt(self, pod: Obj) -> PodRun:
        """A run for `pod`, taking over what its status says is already running."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        pod_status = pod.get("status") or {}
        key = (meta.get("namespace", ""), meta["name"])
        known = {
            (init, s.get("name")): s
            for init, entries in (
                (True, pod_status.get("initContainerStatuses")),
                (False, pod_status.get("containerStatuses")),
            )
            for s in entries or []
        }
        runs: dict[bool, list[ContainerRun]] = {True: [], False: []}
        for init, specs in ((True, spec.get("initContainers")), (False, spec.get("containers"))):
            for container in specs or []:
                c = ContainerRun(spec=container, init=init)
                runs[init].append(_resumed(c, known.get((init, container.get("name")))))
        node = spec["nodeName"]
        run = PodRun(
            key=key,
            uid=meta.get("uid", ""),
            node=node,
            restart_policy=spec.get("restartPolicy") or "Always",
            init=runs[True],
            containers=runs[False],
            host_ip=self._host_ip(node),
            ip=pod_status.get("podIP", ""),
            start_time=pod_status.get("startTime", ""),
            host_network=bool(spec.get("hostNetwork")),
        )
        if run.ip and not run.host_network:
            self._ip_of[key] = (node, run.ip)
            self._used_ips.setdefault(node, set()).add(run.ip)
        self._runs[key] = run
        return run

    def _cancel(self, run: PodRun) -> None:
        for task in [run.task, *run.children]:
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        run.children.clear()

    def _halt(self, run: PodRun) -> None:
        run.halted = True
        self._cancel(run)
        if self._runs.get(run.key) is run:
            del self._runs[run.key]

    # --- addresses, images, events --------------------------------------------------------

    def _host_ip(self, node: str) -> str:
        found = self.cluster.store.get(NODES, "", node)
        for address in ((found or {}).get("status") or {}).get("addresses") or []:
            if address.get("type") == "InternalIP":
                return str(address.get("address", ""))
        return ""

    def _allocate_ip(self, run: PodRun) -> str:
        node = self.cluster.store.get(NODES, "", run.node)
        cidr = ((node or {}).get("spec") or {}).get("podCIDR") or "10.244.255.0/24"
        network = ipaddress.ip_network(cidr, strict=False)
        used = self._used_ips.setdefault(run.node, set())
        size = network.num_addresses
        start = self._next_host.get(run.node, 2)
        # Sequential from the last one handed out, as host-local IPAM: an address
        # freed is not reused at once, so a replaced pod gets a new IP.
        for step in range(size - 3):
            host = 2 + (start - 2 + step) % (size - 3)
            candidate = str(network.network_address + host)
            if candidate not in used:
                used.add(candidate)
                self._next_host[run.node] = host + 1
                self._ip_of[run.key] = (run.node, candidate)
                return candidate
        return ""  # the node's pod CIDR is full: the pod runs without an IP

    def _release_ip(self, key: PodKey) -> None:
        held = self._ip_of.pop(key, None)
        if held is not None:
            self._used_ips.get(held[0], set()).discard(held[1])

    def _recorder(self, node: str) -> EventRecorder:
        recorder = self._recorders.get(node)
        if recorder is None:
            recorder = self._recorders[node] = EventRecorder(self.cluster, KUBELET, node)
        return recorder

    def _event(self, run: PodRun, type_: str, reason: str, message: str, path: str = "") -> None:
        if run.halted:
            return
        pod = self.cluster.store.get(PODS, *run.key)
        if pod is None or pod["metadata"].get("uid") != run.uid:
            return
        self._recorder(run.node).record(pod, type_, reason, message, field_path=path)

    # --- status ------------------------------------------------------------------------------

    def _touch(self, run: PodRun) -> None:
        """Write the run's status soon: changes made in one step become one write."""
        if run.flush_pending or run.halted:
            return
        run.flush_pending = True
        asyncio.get_running_loop().call_soon(self._flush, run)

    def _flush(self, run: PodRun) -> None:
        run.flush_pending = False
        if run.halted or not self._serves(run.node):
            return
        pod = self.cluster.store.get(PODS, *run.key)
        if pod is None or pod["metadata"].get("uid") != run.uid:
            return
        new_status = self._status(run, pod)
        if new_status == pod.get("status"):
            return
        try:
            self.cluster.update(
                self._pods, run.key[0], run.key[1], {**pod, "status": new_status},
                WriteOptions(field_manager=KUBELET), "status",
            )  # fmt: skip
        except status.APIError as exc:
            log.warning("kubelet: status of pod %s/%s not written: %s", *run.key, exc)

    def _status(self, run: PodRun, pod: Obj) -> Obj:
        old = pod.get("status") or {}
        phase = run.phase()
        new = dict(old)
        new["phase"] = phase
        if run.host_ip:
            new["hostIP"] = run.host_ip
            new["hostIPs"] = [{"ip": run.host_ip}]
        if run.ip:
            new["podIP"] = run.ip
            new["podIPs"] = [{"ip": run.ip}]
        if run.start_time:
            new["startTime"] = run.start_time
        if run.init:
            new["initContainerStatuses"] = [c.status() for c in run.init]
        new["containerStatuses"] = [c.status() for c in run.containers]
        if run.ephemeral:
            new["ephemeralContainerStatuses"] = [c.status() for c in run.ephemeral]
        new["conditions"] = self._conditions(run, pod, old.get("conditions") or [], phase)
        return new

    def _conditions(self, run: PodRun, pod: Obj, previous: list[Obj], phase: str) -> list[Obj]:
        terminal = phase in TERMINAL
        finished_reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        # A pod whose containers have started was initialized, whatever a sidecar restarting
        # (crash-looping) now says, as upstream's GeneratePodInitializedCondition has it.
        started = any({"running", "terminated"} & set(c.state) for c in run.containers)
        incomplete = [] if started else [c.name for c in run.init if not c.done]
        unready = [c.name for c in run.init if c.sidecar and not c.ready] + [
            c.name for c in run.containers if not c.ready
        ]
        rows: list[tuple[str, str, str, str]] = [
            ("PodReadyToStartContainers", "False" if terminal else "True", "", ""),
        ]
        if incomplete and not terminal:
            rows.append(
                ("Initialized", "False", "ContainersNotInitialized",
                 f"containers with incomplete status: [{' '.join(incomplete)}]")
            )  # fmt: skip
        else:
            rows.append(
                ("Initialized", "True", "PodCompleted" if terminal and run.init else "", "")
            )
        if terminal:
            ready = ("False", finished_reason, "")
        elif unready:
            ready = (
                "False",
                "ContainersNotReady",
                f"containers with unready status: [{' '.join(unready)}]",
            )
        else:
            ready = ("True", "", "")
        pod_ready = ready
        if ready[0] == "True":
            by_type = {c.get("type"): c for c in previous}
            for gate in (pod.get("spec") or {}).get("readinessGates") or []:
                wanted = gate.get("conditionType", "")
                found = by_type.get(wanted)
                if found is None:
                    pod_ready = ("False", "ReadinessGatesNotReady",
                                 f'corresponding condition of pod readiness gate "{wanted}" does not exist.')  # fmt: skip
                    break
                if found.get("status") != "True":
                    pod_ready = ("False", "ReadinessGatesNotReady",
                                 f'the status of pod readiness gate "{wanted}" is not "True", but {found.get("status")}')  # fmt: skip
                    break
        rows.append(("Ready", *pod_ready))
        rows.append(("ContainersReady", *ready))
        now = timestamp(self.cluster.clock())
        before = {c.get("type"): c for c in previous}
        ours = {row[0] for row in rows}
        out: list[Obj] = []
        for type_, value, reason, message in rows:
            old = before.get(type_)
            entry: Obj = {
                "type": type_,
                "status": value,
                "lastProbeTime": None,
                "lastTransitionTime": (
                    old.get("lastTransitionTime", now)
                    if old is not None and old.get("status") == value
                    else now
                ),
            }
            if reason:
                entry["reason"] = reason
            if message:
                entry["message"] = message
            out.append(entry)
        out += [c for c in previous if c.get("type") not in ours]
        return out

    # --- running a pod -------------------------------------------------------------------------

    async def _live(self, run: PodRun) -> None:
        try:
            if not run.ip:
                run.ip = run.host_ip if run.host_network else self._allocate_ip(run)
            if not run.start_time:
                run.start_time = timestamp(self.cluster.clock())
            for c in run.containers:
                if run.init and not run.initialized and "waiting" in c.state:
                    c.state = {"waiting": {"reason": "PodInitializing"}}
            self._touch(run)
            await self._mount(run)
            for c in run.init:
                if c.done and not c.sidecar:
                    continue
                if c.sidecar:
                    started = asyncio.get_running_loop().create_future()
                    run.children.append(asyncio.ensure_future(self._container(run, c, started)))
                    await started
                    continue
                code = await self._container(run, c)
                if code != 0:
                    run.init_failed = True
                    self._finish(run)
                    return
            for c in run.containers:
                if not c.running and c.exit_code is None:
                    c.state = {"waiting": {"reason": "ContainerCreating"}}
            self._touch(run)
            main = [asyncio.ensure_future(self._container(run, c)) for c in run.containers]
            run.children += main
            await asyncio.gather(*main)
            # Every container finished for good: the pod is done, and its sidecars stop.
            for task in run.children:
                task.cancel()
            for c in run.init:
                if c.sidecar and c.running:
                    self._exit(c, 0)
            self._finish(run)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("kubelet: running pod %s/%s failed", *run.key)

    def _finish(self, run: PodRun) -> None:
        """A pod reached Succeeded or Failed: final status; its IP goes back to the node."""
        self._flush(run)
        run.halted = True
        if self._runs.get(run.key) is run:
            del self._runs[run.key]
        self._release_ip(run.key)

    async def _mount(self, run: PodRun) -> None:
        """Wait until every volume can be mounted (FailedMount while a source is missing)."""
        attempt = 0
        while True:
            pod = self.cluster.store.get(PODS, *run.key)
            if pod is None:
                return
            volume, problem, quiet = _missing_volume(pod, self.cluster.store)
            if not volume:
                return
            if not quiet:
                self._event(
                    run, WARNING, "FailedMount",
                    f'MountVolume.SetUp failed for volume "{volume}" : {problem}',
                )  # fmt: skip
                attempt += 1
                await self.pace.sleep(
                    min(WAIT_RETRY * 2**attempt, _backoff(attempt) * KUBELET_SECOND)
                )
            else:
                await self.pace.sleep(WAIT_RETRY)

    async def _container(
        self, run: PodRun, c: ContainerRun, started: asyncio.Future[None] | None = None
    ) -> int:
        """One container's life; returns its exit code once it will not run again."""
        kind = behaviour(c.image)
        if c.exit_code is not None and not c.resumed and not self._restarts(run, c, c.exit_code):
            if started is not None and not started.done():
                started.set_result(None)
            return c.exit_code
        # A run that has ended (this one's, or one an earlier server process saw) is restarted.
        restarting = c.exit_code is not None or bool(c.last_state)
        while True:
            if c.resumed:
                c.resumed = False
            else:
                await self._pull(run, c)
                await self._configure(run, c)
                await self.pace.sleep(START_TIME)
                # Counted as the new run starts, as a kubelet counts the ended ones: until
                # then the status is the ended run's (its logs are run restartCount's).
                c.restart_count += restarting
                self._start(run, c, kind)
            if started is not None and not started.done():
                started.set_result(None)
            code = await self._behave(run, c, kind)
            self._exit(c, code)
            self._touch(run)
            if not self._restarts(run, c, code):
                return code
            c.crashes += 1
            delay = 0.0 if c.crashes == 1 else _backoff(c.crashes - 1)
            c.last_state = {"terminated": c.state["terminated"]}
            if delay:
                pod_ref = f"{run.key[1]}_{run.key[0]}({run.uid})"
                c.state = {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off {go_duration(delay)} restarting failed container={c.name} pod={pod_ref}",
                    }
                }
                self._event(
                    run, WARNING, "BackOff",
                    f"Back-off restarting failed container {c.name} in pod {pod_ref}", c.field_path,
                )  # fmt: skip
                self._touch(run)
                await self.pace.sleep(delay * KUBELET_SECOND)
            restarting = True

    def _restarts(self, run: PodRun, c: ContainerRun, code: int) -> bool:
        if c.ephemeral:
            return False
        if c.sidecar:
            return True
        policy = run.restart_policy
        if c.init:
            return policy != "Never" and code != 0
        return policy == "Always" or (policy == "OnFailure" and code != 0)

    async def _pull(self, run: PodRun, c: ContainerRun) -> None:
        image = c.image
        present = self._images.setdefault(run.node, set())
        policy = c.spec.get("imagePullPolicy") or "IfNotPresent"
        failing = behaviour(image) == "doesnotexist"
        if policy == "Never" or (policy == "IfNotPresent" and image in present and not failing):
            if image in present and not failing:
                c.pulled = True
                self._event(
                    run, NORMAL, "Pulled",
                    f'Container image "{image}" already present on machine', c.field_path,
                )  # fmt: skip
                return
            message = f'Container image "{image}" is not present with pull policy of Never'
            c.state = {"waiting": {"reason": "ErrImageNeverPull", "message": message}}
            self._event(run, WARNING, "ErrImageNeverPull", message, c.field_path)
            self._touch(run)
            await asyncio.get_running_loop().create_future()  # until the pod goes
        attempt = 0
        while True:
            self._event(run, NORMAL, "Pulling", f'Pulling image "{image}"', c.field_path)
            began = asyncio.get_running_loop().time()
            await self.pace.sleep(PULL_TIME)
            if not failing:
                took = go_duration(asyncio.get_running_loop().time() - began)
                self._event(
                    run, NORMAL, "Pulled",
                    f'Successfully pulled image "{image}" in {took} ({took} including waiting). '
                    f"Image size: {_image_size(image)} bytes.",
                    c.field_path,
                )  # fmt: skip
                present.add(image)
                c.pulled = True
                return
            ref = image_reference(image)
            error = (
                f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
                f'failed to resolve reference "{ref}": {ref}: not found'
            )
            self._event(
                run, WARNING, "Failed", f'Failed to pull image "{image}": {error}', c.field_path
            )
            self._event(run, WARNING, "Failed", "Error: ErrImagePull", c.field_path)
            c.state = {"waiting": {"reason": "ErrImagePull", "message": error}}
            self._touch(run)
            await self.pace.sleep(ERR_PULL_SHOWN)
            attempt += 1
            back_off = f'Back-off pulling image "{image}"'
            c.state = {"waiting": {"reason": "ImagePullBackOff", "message": back_off}}
            self._event(run, NORMAL, "BackOff", back_off, c.field_path)
            self._event(run, WARNING, "Failed", "Error: ImagePullBackOff", c.field_path)
            self._touch(run)
            await self.pace.sleep(_backoff(attempt) * KUBELET_SECOND)

    async def _configure(self, run: PodRun, c: ContainerRun) -> None:
        """CreateContainerConfigError while an env source is missing."""
        attempt = 0
        while True:
            problem = _config_problem(c.spec, run.key[0], self.cluster.store)
            if not problem:
                return
            attempt += 1
            if (c.state.get("waiting") or {}).get("reason") != "CreateContainerConfigError":
                c.state = {"waiting": {"reason": "CreateContainerConfigError", "message": problem}}
                self._touch(run)
            self._event(run, WARNING, "Failed", f"Error: {problem}", c.field_path)
            await self.pace.sleep(min(WAIT_RETRY * 2**attempt, _backoff(attempt) * KUBELET_SECOND))

    def _start(self, run: PodRun, c: ContainerRun, kind: str) -> None:
        now = timestamp(self.cluster.clock())
        c.container_id = "containerd://" + secrets.token_hex(32)
        c.state = {"running": {"startedAt": now}}
        c.started = not c.spec.get("startupProbe")
        probe = c.spec.get("readinessProbe")
        command = self._command(run, c)
        c.ready = (
            (not c.init or c.sidecar)
            and not c.ephemeral
            and probe is None
            and kind != "notready"
            and c.started
            and (command is None or command.seconds > 0)
        )
        self._event(run, NORMAL, "Created", f"Created container: {c.name}", c.field_path)
        self._event(run, NORMAL, "Started", f"Started container {c.name}", c.field_path)
        self._touch(run)

    async def _behave(self, run: PodRun, c: ContainerRun, kind: str) -> int:
        """Run a started container as its image says; returns the exit code when it exits."""
        if kind in ("crashloop", "exit1"):
            await self.pace.sleep(RUN_TIME)
            return 1
        if kind == "exit0":
            await self.pace.sleep(RUN_TIME)
            return 0
        command = self._command(run, c)
        if c.init and not c.sidecar:
            # Work before the pod's containers start, as a Job's: its command's code, or 0
            # for the image's own; one that never ends holds the pod in Init for good.
            if command is None and not _reading(c.spec).ends:
                await asyncio.get_running_loop().create_future()  # until the pod goes
            run_for = CommandRun(0.0, 0) if command is None else command
            await self.pace.sleep(max(INIT_RUN_TIME, run_for.seconds))
            return run_for.exit_code
        if command is not None and not command.seconds:
            return command.exit_code  # over before the kubelet looked
        serving = self._serve(run, c, kind)
        if command is None:
            await serving  # until stopped
            return 0  # pragma: no cover - unreachable: serving never ends
        # Ready as any container while it runs (its probe's delay passed), then it exits.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(serving, self.pace.seconds(command.seconds))
        return command.exit_code

    def _command(self, run: PodRun, c: ContainerRun) -> CommandRun | None:
        """How a container's command runs (see `command_run`); None: until stopped."""
        return command_run(c.spec, run.restart_policy, init=c.init, ephemeral=c.ephemeral)

    async def _serve(self, run: PodRun, c: ContainerRun, kind: str) -> None:
        """A running container's probes: started, then Ready (or never, for `notready`)."""
        startup = c.spec.get("startupProbe")
        if startup and not c.started:
            await self.pace.sleep(_probe_delay(startup))
            c.started = True
            c.ready = c.spec.get("readinessProbe") is None and kind != "notready"
            self._touch(run)
        probe: Obj | None = c.spec.get("readinessProbe")
        if kind == "notready":
            if probe is None:
                await asyncio.get_running_loop().create_future()  # never ready, nothing to say
                return  # pragma: no cover - unreachable: the future never completes
            await self.pace.sleep(_probe_delay(probe))
            period = int(probe.get("periodSeconds") or 10) * KUBELET_SECOND
            while True:
                self._event(
                    run, WARNING, "Unhealthy",
                    f"Readiness probe failed: {_probe_failure(probe, run.ip)}", c.field_path,
                )  # fmt: skip
                await self.pace.sleep(period)
        if probe is not None and not c.ready:
            await self.pace.sleep(_probe_delay(probe))
            c.ready = True
            self._touch(run)
        await asyncio.get_running_loop().create_future()  # runs until stopped

    def _exit(self, c: ContainerRun, code: int) -> None:
        started_at = (c.state.get("running") or {}).get("startedAt", "")
        c.state = {
            "terminated": {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": started_at,
                "finishedAt": timestamp(self.cluster.clock()),
                "containerID": c.container_id,
            }
        }
        c.ready = c.init and not c.sidecar and code == 0
        c.started = False

    # --- stopping a pod --------------------------------------------------------------------------

    async def _stop(self, run: PodRun) -> None:
        """Graceful deletion: Killing, stop within the (scaled) grace period, final status, remove."""
        try:
            pod = self.cluster.store.get(PODS, *run.key)
            if pod is None:
                return
            grace = int(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
            running = [c for c in run.everything if c.running]
            for c in reversed(running):  # sidecars stop after the main containers
                self._event(run, NORMAL, "Killing", f"Stopping container {c.name}", c.field_path)
            if grace and running:
                await self.pace.sleep(min(grace * KUBELET_SECOND, STOP_TIME))
            now = timestamp(self.cluster.clock())
            for c in run.everything:
                if c.running:
                    self._exit(c, 0)
                elif "waiting" in c.state and c.restart_count == 0 and not c.last_state:
                    c.state = {
                        "terminated": {
                            "exitCode": 137,
                            "reason": "ContainerStatusUnknown",
                            "message": "The container could not be located when the pod was terminated",
                            "finishedAt": now,
                        }
                    }
                    c.ready = False
                elif "waiting" in c.state:
                    c.state = {"terminated": c.last_state.get("terminated") or {"exitCode": 0}}
                    c.ready = False
            self._flush(run)
            await self.pace.sleep(TEARDOWN_TIME)
            pod = self.cluster.store.get(PODS, *run.key)
            if pod is not None and pod["metadata"].get("uid") == run.uid:
                with contextlib.suppress(status.NotFound, status.Conflict):
                    self.cluster.delete(
                        self._pods, run.key[0], run.key[1],
                        DeleteOptions(grace_period_seconds=0, precondition_uid=run.uid),
                    )  # fmt: skip
        finally:
            run.halted = True
            if self._runs.get(run.key) is run:
                del self._runs[run.key]


def _probe_delay(probe: Obj) -> float:
    """Base seconds until a probe first succeeds: its initialDelaySeconds, counted in kubelet
    seconds, and at least one short beat (the first probe runs after the container starts)."""
    delay = int(probe.get("initialDelaySeconds") or 0) * KUBELET_SECOND
    return max(delay, KUBELET_SECOND)


def _probe_failure(probe: Obj, ip: str) -> str:
    if probe.get("httpGet") is not None:
        return "HTTP probe failed with statuscode: 503"
    if probe.get("tcpSocket") is not None:
        port = probe["tcpSocket"].get("port", "")
        return f"dial tcp {ip}:{port}: connect: connection refused"
    if probe.get("grpc") is not None:
        return 'service unhealthy (responded with "NOT_SERVING")'
    return "command exited with non-zero status 1"


# --- logs ------------------------------------------------------------------------------------


def _log_lines(
    pod: Obj, spec: Obj, state: Obj, *, restarted: int
) -> list[tuple[datetime.datetime, str]]:
    """The simulated output of one run of a container, with the time of each line."""
    image = str(spec.get("image", ""))
    kind = behaviour(image)
    running = state.get("running") or state.get("terminated") or {}
    started_text = running.get("startedAt") or timestamp(datetime.datetime.now(datetime.UTC))
    try:
        started = datetime.datetime.strptime(started_text, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.UTC
        )
    except ValueError:
        started = datetime.datetime.now(datetime.UTC)
    ports = [p.get("containerPort") for p in spec.get("ports") or [] if p.get("containerPort")]
    port = ports[0] if ports else 8080
    name = spec.get("name", "")
    ns, pod_name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
    pod_spec = pod.get("spec") or {}
    init = spec in (pod_spec.get("initContainers") or [])
    debugging = spec in (pod_spec.get("ephemeralContainers") or [])
    restart_policy = pod_spec.get("restartPolicy") or "Always"
    finishes = command_run(spec, restart_policy, init=init, ephemeral=debugging)
    lines = [
        f"INFO starting {image} (container {name} of pod {ns}/{pod_name}, run {restarted + 1})"
    ]
    if kind == "crashloop":
        lines += [
            'ERROR simulated crash: the image name contains "crashloop"',
            "INFO exiting with code 1",
        ]
    elif kind == "exit1":
        lines += ["ERROR the work failed", "INFO exiting with code 1"]
    elif kind == "exit0":
        lines += ["INFO the work is done", "INFO exiting with code 0"]
    elif finishes is not None or (debugging and command_line(spec)):
        # One log line, as each of the others: a script's lines joined (tail counts lines).
        lines.append(f"INFO running {' '.join(command_line(spec).split())}")
        if "terminated" in state:
            lines.append(f"INFO exiting with code {state['terminated'].get('exitCode', 0)}")
    elif kind == "notready":
        lines += [
            f"INFO listening on 0.0.0.0:{port}",
            'WARN not ready: the image name contains "notready"',
        ]
    else:
        lines += [f"INFO listening on 0.0.0.0:{port}", "INFO ready to serve requests"]
    out = []
    for index, text in enumerate(lines):
        moment = started + datetime.timedelta(milliseconds=17 * index)
        out.append((moment, f"{_micro(moment)[:-4]}Z {text}"))
    return out


def log_container(pod: Obj, container: str) -> tuple[str, Obj]:
    """The container a log request reads — the one named, or the pod's only one — and its
    spec; else the API server's BadRequest."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    regular = [c.get("name", "") for c in spec.get("containers") or []]
    inits = [c.get("name", "") for c in spec.get("initContainers") or []]
    if not container:
        if len(regular) != 1:
            hint = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
            raise status.BadRequest(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(regular)}]{hint}"
            )
        container = regular[0]
    specs = {
        c.get("name"): c
        for section in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(section) or []
    }
    if container not in specs:
        raise status.BadRequest(f"container {container} is not valid for pod {name}")
    return container, specs[container]


def _container_status(pod: Obj, container: str) -> Obj:
    """The status the kubelet wrote for `container`; {} before it wrote one."""
    pod_status = pod.get("status") or {}
    sections = ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
    found = (s for section in sections for s in pod_status.get(section) or [])
    return next((s for s in found if s.get("name") == container), {})


def running_run(pod: Obj, container: str) -> str:
    """The containerID of the run of `container` (see `log_container`) that is running now,
    or "": the run `kubectl logs -f` follows until it ends."""
    entry = _container_status(pod, log_container(pod, container)[0])
    return str(entry.get("containerID", "")) if "running" in (entry.get("state") or {}) else ""


def ended_run_log(pod: Obj, container: str, run: str, *, timestamps: bool = False) -> str | None:
    """The whole log of `container`'s run `run` once it has ended; None while it runs."""
    container = log_container(pod, container)[0]
    entry = _container_status(pod, container)
    for previous, key in ((False, "state"), (True, "lastState")):
        ended = (entry.get(key) or {}).get("terminated") or {}
        if ended.get("containerID") == run:
            return container_log(pod, container, previous=previous, timestamps=timestamps)
    if entry.get("containerID") == run:
        return None
    return ""  # the run left no trace (the pod is gone or was replaced): nothing more to say


def container_log(
    pod: Obj,
    container: str = "",
    *,
    previous: bool = False,
    tail_lines: int | None = None,
    timestamps: bool = False,
    limit_bytes: int | None = None,
) -> str:
    """What `GET pods/NAME/log` answers, or a BadRequest with the kubelet's words."""
    name = pod["metadata"]["name"]
    container, container_spec = log_container(pod, container)
    entry = _container_status(pod, container)
    state = entry.get("state") or {}
    last = entry.get("lastState") or {}
    restarts = int(entry.get("restartCount") or 0)
    # Runs are counted from 0: the current one is number restartCount, and a container
    # waiting to restart has its latest run in lastState.
    current = "running" in state or "terminated" in state
    if previous:
        if not last.get("terminated"):
            raise status.BadRequest(
                f'previous terminated container "{container}" in pod "{name}" not found'
            )
        chosen, run_index = last, restarts - 1 if current else restarts
    elif current:
        chosen, run_index = state, restarts
    elif last.get("terminated"):
        chosen, run_index = last, restarts  # a crash-looping container's last run
    else:
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            reason = "trying and failing to pull image"
        raise status.BadRequest(
            f'container "{container}" in pod "{name}" is waiting to start: {reason}'
        )
    lines = _log_lines(pod, container_spec, chosen, restarted=run_index)
    if tail_lines is not None and tail_lines >= 0:
        lines = lines[len(lines) - tail_lines :] if tail_lines else []
    text = "".join(
        (f"{moment.strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {line}\n" if timestamps else f"{line}\n")
        for moment, line in lines
    )
    if limit_bytes is not None and limit_bytes >= 0:
        text = text.encode()[:limit_bytes].decode(errors="ignore")
    return text
