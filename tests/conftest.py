"""Shared fixtures: a real local cluster per test module, on a free port, in a temporary home."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from stackwright.localcluster import lifecycle
from stackwright.localcluster.lifecycle import ClusterInfo

# The suite explores the same examples on every run, so that a clean checkout passes or
# fails alike (a property broken by a rare example is caught by `HYPOTHESIS_PROFILE=explore
# pytest tests/unit`, which draws new ones, and then pinned with @example). No deadline: an
# example slowed by a busy machine (two workers, a cluster starting beside them) is no failure.
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def _kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        pytest.fail("kubectl is not on PATH; .ci/run installs it")
    return found


class LiveCluster:
    """A started cluster and the handles tests use to reach it."""

    def __init__(self, info: ClusterInfo, home: Path) -> None:
        self.info = info
        self.home = home
        self.kubeconfig = info.kubeconfig
        self.server = info.server
        self.token = (info.folder / "token").read_text().strip()
        self.ca = info.folder / "ca.crt"

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        result = subprocess.run(
            [_kubectl(), *args], input=input, capture_output=True, text=True, env=env, timeout=120
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
            )
        return result

    def http(self) -> httpx.Client:  # noqa: F821
        import httpx

        return httpx.Client(
            base_url=self.server,
            verify=ssl.create_default_context(cafile=str(self.ca)),
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    home = tmp_path_factory.mktemp("swhome")
    old = os.environ.get("STACKWRIGHT_HOME")
    old_cache = os.environ.get("KUBECACHEDIR")
    os.environ["STACKWRIGHT_HOME"] = str(home)
    # kubectl's discovery cache is kept by host and port: a later module's cluster on a port
    # an earlier one had would be told that one's kinds (`get widgets` of another group).
    os.environ["KUBECACHEDIR"] = str(home / "kubectl-cache")
    try:
        info, _ = lifecycle.start("test")
        try:
            yield LiveCluster(info, home)
        finally:
            lifecycle.stop("test")
            log = info.folder / "server.log"
            if log.exists() and log.read_text().strip():
                sys.stderr.write(f"--- server.log of {info.name} ---\n{log.read_text()[-5000:]}\n")
    finally:
        for name, value in (("STACKWRIGHT_HOME", old), ("KUBECACHEDIR", old_cache)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: Where `_no_cluster_left` writes the folders of local clusters tests left running (and
#: stopped), in the run's root temporary folder: under pytest-xdist each worker has its own
#: below it, and the summary is written by the process that started them.
_LEFT_RUNNING = "left-running.txt"


def _run_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _no_cluster_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Nothing is left running: a local cluster a test started in one of this run's
    temporary homes and did not stop is stopped at the end, and named in the summary so
    the test that leaked it can be found (its folder is the test's temporary directory)."""
    yield
    base = str(tmp_path_factory.getbasetemp())
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in args]
        if "stackwright.localcluster.server" in words and "--dir" in words:
            folder = words[words.index("--dir") + 1]
            if folder.startswith(base):
                lifecycle._terminate(int(proc.name))
                with (_run_root(tmp_path_factory) / _LEFT_RUNNING).open("a") as left:
                    left.write(folder + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    factory = terminalreporter.config._tmp_path_factory
    left = _run_root(factory) / _LEFT_RUNNING
    for folder in left.read_text().splitlines() if left.exists() else ():
        terminalreporter.write_line(f"a test left the local cluster of {folder} running: stopped")


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Secret values a test's programs remember for masking must not mask the next test's text."""
    from stackwright.errors import forget_secrets

    yield
    forget_secrets()


@pytest.fixture(autouse=True)
def _not_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a CI system runs a command is each test's to say (`CI=true` in its env): the
    suite's own CI job must not make the commands of every test refuse to ask or drop the
    live display (`stackwright.cli.terminal`), nor name its job as the holder of every lock."""
    from stackwright.cli.terminal import CI_VARIABLES

    for name in (*CI_VARIABLES, *CI_JOB_VARIABLES):
        monkeypatch.delenv(name, raising=False)


#: What CI systems set that names the job (the lock holder's address, `state._sqlite`).
CI_JOB_VARIABLES = (
    "GITHUB_RUN_ID", "GITHUB_REPOSITORY", "GITHUB_SERVER_URL", "SYSTEM_COLLECTIONURI",
    "BUILD_BUILDID", "SYSTEM_TEAMPROJECT", "BITBUCKET_GIT_HTTP_ORIGIN", "BITBUCKET_BUILD_NUMBER",
    "CI_JOB_URL", "BUILDKITE_BUILD_URL", "CIRCLE_BUILD_URL", "TRAVIS_BUILD_WEB_URL", "BUILD_URL",
)  # fmt: skip
