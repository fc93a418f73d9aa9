"""`url_shown`: a URL as a message may show it, whatever credential it carries (a password, a
token as its user name, a query option), with the rest of it as written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackwright.errors import url_shown

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # A token as the user name, as GitHub, chart repositories and registries take it.
        ("https://ghp_Qz81xToken@github.com/x", "https://[secret]@github.com/x"),
        ("https://Qz81xToken@charts.example.com", "https://[secret]@charts.example.com"),
        ("http://Qz81xToken@127.0.0.1:8879/charts/", "http://[secret]@127.0.0.1:8879/charts/"),
        ("oci://Qz81xToken@ghcr.io/org/chart", "oci://[secret]@ghcr.io/org/chart"),
        ("git+https://Qz81xToken@github.com/o/r.git", "git+https://[secret]@github.com/o/r.git"),
        ("HTTPS://Qz81xToken@host?a=1", "HTTPS://[secret]@host?a=[secret]"),
        # A user name and a password: the name stays, as before.
        ("https://ci:pw-Qz81x@charts.example/x", "https://ci:[secret]@charts.example/x"),
        (
            "postgresql://app:pw/Qz?81x@db.internal/state",
            "postgresql://app:[secret]@db.internal/state",
        ),
        # A database's or ssh's user name alone is an account, not a credential.
        ("postgresql://app@db.internal/state", "postgresql://app@db.internal/state"),
        ("postgres://app@db.internal/state", "postgres://app@db.internal/state"),
        ("ssh://git@github.com/o/r.git", "ssh://git@github.com/o/r.git"),
        # An '@' past the authority is the path's: a chart's digest, a file's name.
        ("oci://ghcr.io/org/chart@sha256:0123abcd", "oci://ghcr.io/org/chart@sha256:0123abcd"),
        ("https://charts.example/x@1.0", "https://charts.example/x@1.0"),
        ("file:///tmp/a@b/state.db", "file:///tmp/a@b/state.db"),
        # A file URL carries no credential: a relative path's first folder, a drive's path.
        ("file://me@work/state.db", "file://me@work/state.db"),
        ("file://C:/Users/me@work/state.db", "file://C:/Users/me@work/state.db"),
        # A digest after a registry's port: its '@' is the path's, and the port no password.
        (f"oci://localhost:5000/chart@{DIGEST}", f"oci://localhost:5000/chart@{DIGEST}"),
        (f"oci://ci:pw@registry:5000/c@{DIGEST}", f"oci://ci:[secret]@registry:5000/c@{DIGEST}"),
        (f"oci://Qz81xToken@registry:5000/c@{DIGEST}", f"oci://[secret]@registry:5000/c@{DIGEST}"),
        ("https://charts.example", "https://charts.example"),
        # No scheme: libpq's forms, as before.
        ("app@db.internal/state", "app@db.internal/state"),
        ("host=db user=app password=pw-Qz81x", "host=db user=app password=[secret]"),
    ],
)
def test_a_url_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert url_shown(url) == shown


#: What a token, a user name or a host may be written of (none of ':', '@', '/', '?', '#').
_WORD = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.~"), min_size=1, max_size=24)  # fmt: skip
_PATH = st.lists(_WORD, max_size=3).map(lambda parts: "".join(f"/{p}" for p in parts))


@given(
    scheme=st.sampled_from(["http", "https", "oci", "git+https", "HTTPS"]),
    token=_WORD,
    host=_WORD,
    path=_PATH,
)
def test_a_token_as_the_user_name_is_never_shown(
    scheme: str, token: str, host: str, path: str
) -> None:
    assert url_shown(f"{scheme}://{token}@{host}{path}") == f"{scheme}://[secret]@{host}{path}"


@given(
    scheme=st.sampled_from(["http", "https", "oci", "postgresql", "ssh"]),
    user=_WORD,
    password=st.text(min_size=1).filter(lambda p: "@" not in p),
    host=_WORD,
    path=_PATH,
)
def test_a_password_is_never_shown_and_its_user_name_is(
    scheme: str, user: str, password: str, host: str, path: str
) -> None:
    url = f"{scheme}://{user}:{password}@{host}{path}"
    assert url_shown(url) == f"{scheme}://{user}:[secret]@{host}{path}"


@given(
    scheme=st.sampled_from(["postgresql", "postgres", "ssh"]), user=_WORD, host=_WORD, path=_PATH
)
def test_a_database_or_ssh_user_name_alone_is_shown(
    scheme: str, user: str, host: str, path: str
) -> None:
    url = f"{scheme}://{user}@{host}{path}"
    assert url_shown(url) == url
