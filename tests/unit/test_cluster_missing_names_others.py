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
