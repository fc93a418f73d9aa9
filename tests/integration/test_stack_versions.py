"""Recovering from a bad state edit as Pulumi users do (`stack history`, `stack export
--version N`, `stack import`): the real CLI, a real cluster, a stack holding a secret."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_secrets_lifecycle import assert_nowhere
from test_secrets_lifecycle import passphrase as passphrase  # the fixture

pytestmark = pytest.mark.integration

PLAIN = "Sw0rdfish-v3rsions"
CM = "kubernetes:core/v1:ConfigMap"
PROGRAM = """
cfg = sw.Config()
k8s.core.v1.ConfigMap("settings", metadata={"namespace": NS}, data={"mode": MODE})
k8s.core.v1.Secret("creds", metadata={"namespace": NS},
                   string_data={"password": cfg.require_secret("password")})
sw.export("password", cfg.require_secret("password"))
"""


def test_a_bad_state_edit_is_undone_from_an_earlier_version(
    new_project: Any, cluster: LiveCluster, passphrase: str, tmp_path: Any
) -> None:
    p = new_project()
    cluster.kubectl("create", "namespace", p.ns)
    p.sw("config", "set", "--secret", "password", PLAIN)
    p.program('MODE = "fast"\n' + PROGRAM)
    p.up()
    p.program('MODE = "slow"\n' + PROGRAM)
    p.up()
    good = p.sw("stack", "export").out
    # The bad edit: the state forgets the ConfigMap, which the cluster still has; the next
    # `up` would make a second one under a fresh auto-name, as Pulumi's would.
    p.sw("state", "delete", "--yes", p.urn(CM, "settings"))
    assert p.preview().changed() == {"settings": "create"}

    history = p.sw("stack", "history").out.splitlines()
    assert [line.split()[:3] for line in history] == [
        ["#3", "state", "delete"],
        ["#2", "up", "succeeded"],
        ["#1", "up", "succeeded"],
    ]
    version_2 = tmp_path / "v2.json"
    p.sw("stack", "export", "--version", "2", "--file", str(version_2))
    assert version_2.read_text() == good
    first = json.loads(p.sw("stack", "export", "--version", "1").out)
    assert [r["inputs"]["data"] for r in first["resources"] if r["type"] == CM] == [
        {"mode": "fast"}
    ]
    p.sw("stack", "import", "--file", str(version_2))
    assert p.sw("stack", "export").out == good
    assert p.preview().changed() == {}  # the state agrees with the program and the cluster again

    refused = p.sw("stack", "export", "--version", "9", rc=2)
    assert refused.err == (
        "error: stack dev has no version 9: its versions are 1-4 "
        "(`stackwright stack history` lists them)\n"
    )
    # The saved states hold the secret sealed, as the rows do: never in plain text.
    with contextlib.closing(sqlite3.connect(cluster.home / "state.db")) as db:
        saved = [zlib.decompress(d) for (d,) in db.execute("SELECT data FROM snapshots") if d]
    assert len(saved) == 4
    for blob in saved:
        assert PLAIN.encode() not in blob
    assert_nowhere(p, cluster, PLAIN, refused)
