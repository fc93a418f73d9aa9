"""kube-apiserver's health endpoints as the local cluster answers them."""

from __future__ import annotations

import asyncio
from typing import Any

from stackwright.localcluster import health
from stackwright.localcluster.server import _read_request


def _request(query: bytes) -> Any:
    async def receive() -> dict[str, Any]:
        return {"body": b"", "more_body": False}

    scope = {"method": "GET", "path": "/readyz", "query_string": query, "headers": []}
    return asyncio.run(_read_request(scope, receive))


def test_every_exclude_of_a_readyz_request_is_honoured() -> None:
    request = _request(b"verbose&exclude=etcd&exclude=ping&exclude=nope&exclude=gone")
    assert request.every("exclude") == ["etcd", "ping", "nope", "gone"]
    assert request.query["exclude"] == "gone"  # one value, as before, for everything else
    lines = health.answer("/readyz", request.every("verbose") != [], request.every("exclude"))
    shown = lines.decode().splitlines()
    assert "[+]etcd excluded: ok" in shown and "[+]ping excluded: ok" in shown
    assert "[+]log ok" in shown
    assert shown[-2:] == [
        'warn: some health checks cannot be excluded: no matches for "gone","nope"',
        "readyz check passed",
    ]


def test_a_bare_probe_answers_ok_and_one_check_by_its_path() -> None:
    assert health.answer("/readyz", False, ["etcd"]) == b"ok"
    assert health.answer("/livez/etcd", True, []) == b"ok"
