"""A local cluster that does not exist is named with the ones that do: a user who started
`a` and `b` and left out `--name` learns why `local` is not found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackwright.errors import UsageError
from stackwright.localcluster import lifecycle


def test_a_missing_cluster_names_the_clusters_there_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path))
    with pytest.raises(UsageError) as none:
        lifecycle.info()
    assert str(none.value) == (
        "no local cluster named 'local': start one with `stackwright cluster start --name local`"
    )
    for name in ("b", "a"):
        folder = tmp_path / "clusters" / name
        folder.mkdir(parents=True)
        (folder / "cluster.json").write_text(json.dumps({"port": 1}))
    (tmp_path / "clusters" / "half-made").mkdir()  # no cluster.json: not a cluster

    with pytest.raises(UsageError) as missing:
        lifecycle.info()
    assert str(missing.value) == (
        "no local cluster named 'local' (there are: a, b): start one with "
        "`stackwright cluster start --name local`"
    )
    assert [c.name for c in lifecycle.list_clusters()] == ["a", "b"]


def test_deleting_a_cluster_that_does_not_exist_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cluster delete --name loacl` said "cluster loacl deleted" (exit 0) while `local`
    kept running; `stop` and `status` already refused a name no cluster has."""
    from stackwright.cli.main import main

    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path))
    folder = tmp_path / "clusters" / "local"
    folder.mkdir(parents=True)
    (folder / "cluster.json").write_text(json.dumps({"port": 1}))

    with pytest.raises(SystemExit) as caught:
        main(["cluster", "delete", "--name", "loacl"])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "error: no local cluster named 'loacl' (there are: local): start one with "
        "`stackwright cluster start --name loacl`\n"
    )
    assert not (tmp_path / "clusters" / "loacl").exists() and folder.exists()
    lifecycle.delete("local")  # one that exists goes
    assert not folder.exists()


def test_a_first_start_refused_leaves_no_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its port taken, a new cluster's start wrote nothing but left `clusters/N/start.lock`:
    not listed, yet `cluster delete --name N` found it."""
    import socket

    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=f"port {port} on 127.0.0.1 is in use"):
            lifecycle.start("fresh", port=port)
    assert not (tmp_path / "clusters" / "fresh").exists()
    assert lifecycle.list_clusters() == []
