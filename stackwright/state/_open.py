"""Which backend a URL names, and where the default one lives.

    (none)                       $STACKWRIGHT_HOME/state.db (STACKWRIGHT_HOME defaults to ~/.stackwright)
    file://PATH                  a SQLite file at PATH, or PATH/state.db when PATH is a directory
    file://PATH?synchronous=full the same, fsyncing every commit (survives power loss, not only kill -9)

`file:///abs/path` is absolute; `file://rel/path` and `file://~/path` are relative
to the working directory and the home directory. The folder must exist, but for
STACKWRIGHT_HOME's own, which is made on first use. Only URL parsing and choosing
the backend class happen here: this module never reads or writes state.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final
from urllib.parse import parse_qsl

from stackwright.errors import UsageError, url_shown
from stackwright.state._backend import Backend
from stackwright.state._secrets import Encrypter
from stackwright.state._sqlite import SQLiteBackend

#: Schemes a backend URL may use today; PostgreSQL and S3 are on the roadmap.
SCHEMES: Final = ("file",)
_OPTIONS: Final = ("synchronous",)


def stackwright_home() -> Path:
    return Path(os.environ.get("STACKWRIGHT_HOME") or "~/.stackwright").expanduser()


def backend_url(project_url: str | None = None) -> str:
    """The URL to use: `STACKWRIGHT_BACKEND_URL`, else the project's (`Stackwright.yaml`),
    else the default SQLite file under STACKWRIGHT_HOME — the precedence DESIGN.md sets."""
    return (
        os.environ.get("STACKWRIGHT_BACKEND_URL")
        or project_url
        or f"file://{stackwright_home() / 'state.db'}"
    )


def open_backend(
    url: str | None = None,
    *,
    encrypter: Encrypter | None = None,
    clock: Callable[[], float] | None = None,
) -> Backend:
    """The backend at `url` (None: `backend_url()`), opened and its schema checked.

    Raises UsageError naming the URL and the supported schemes for an unknown
    scheme, and StateCorrupt when the file is not a sound state store.
    """
    url = url or backend_url()
    shown = url_shown(url, _OPTIONS)  # a URL may carry a password: never shown
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in SCHEMES:
        supported = ", ".join(f"{s}://" for s in SCHEMES)
        hint = f"; for a local file write file://{shown}" if not sep else ""
        raise UsageError(
            f"unsupported state backend URL {shown!r}: supported schemes are {supported}{hint}"
        )
    location, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True))
    for key in options:
        if key not in _OPTIONS:
            raise UsageError(
                f"unknown option {key!r} in state backend URL {shown!r}: options are {', '.join(_OPTIONS)}"
            )
    if not location:
        raise UsageError(
            f"state backend URL {shown!r} names no path: write file:///path/to/state.db"
        )
    path = Path(location).expanduser()
    if path.is_dir() or location.endswith("/"):
        path = path / "state.db"
    if path.parent.resolve() == stackwright_home().resolve():
        # The default home is made on first use; any other folder is the user's to make: a
        # typo in a URL would otherwise start an empty store where no stack exists.
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(
                f"cannot create the folder of state backend {shown!r}: {error}"
            ) from error
    elif not path.parent.is_dir():
        raise UsageError(
            f"the folder {path.parent} of state backend {shown!r} does not exist: create it "
            "(mkdir -p), or fix the URL"
        )
    return SQLiteBackend(
        path,
        synchronous=options.get("synchronous", "normal"),
        encrypter=encrypter,
        clock=clock or time.time,
    )
