"""`Config`: reading a stack's configuration from a program, and the messages for bad values."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from stackwright.errors import UsageError
from stackwright.sdk.config import Config
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import Secret

CONFIG: dict[str, Any] = {
    "shop:name": "web",
    "shop:replicas": "3",
    "shop:replicas_typed": 4,
    "shop:ratio": "0.25",
    "shop:debug": "true",
    "shop:quiet": "No",
    "shop:typed_flag": False,
    "shop:labels": '{"team": "a", "tier": 2}',
    "shop:typed_labels": {"team": "b"},
    "shop:password": "hunter2",
    "shop:bad_int": "three",
    "shop:float_int": 2.5,
    "shop:bool_int": True,
    "shop:bad_bool": "maybe",
    "shop:bad_json": "{nope",
    "kubernetes:namespace": "apps",
}


@pytest.fixture
def program() -> Iterator[Program]:
    prog = Program(
        project="shop", stack="dev", config=CONFIG, secret_keys=frozenset({"shop:password"})
    )
    with running(prog):
        yield prog


def test_strings(program: Program) -> None:
    cfg = Config()
    assert cfg.namespace == "shop"
    assert cfg.get("name") == "web"
    assert cfg.require("name") == "web"
    assert cfg.get("absent") is None
    assert cfg.get("absent", "fallback") == "fallback"
    # Structured values read as JSON text, in JSON's spelling.
    assert cfg.get("typed_labels") == '{"team": "b"}'
    assert cfg.get("typed_flag") == "false"


def test_numbers_and_flags(program: Program) -> None:
    cfg = Config()
    assert cfg.get_int("replicas") == 3
    assert cfg.get_int("replicas_typed") == 4
    assert cfg.require_int("replicas") == 3
    assert cfg.get_int("absent") is None
    assert cfg.get_int("absent", 2) == 2
    assert cfg.get_float("ratio") == 0.25
    assert cfg.get_float("replicas") == 3.0
    assert cfg.get_bool("debug") is True
    assert cfg.get_bool("quiet") is False
    assert cfg.get_bool("typed_flag") is False
    assert cfg.require_bool("debug") is True
    assert cfg.get_bool("absent", True) is True


def test_objects(program: Program) -> None:
    cfg = Config()
    assert cfg.get_object("labels") == {"team": "a", "tier": 2}
    assert cfg.get_object("typed_labels") == {"team": "b"}
    assert cfg.require_object("labels") == {"team": "a", "tier": 2}
    assert cfg.get_object("absent", []) == []


def test_other_namespaces(program: Program) -> None:
    assert Config("kubernetes").get("namespace") == "apps"
    assert (Config("kubernetes").name, Config().name) == ("kubernetes", "shop")  # Pulumi's name
    assert Config("app").get("name") is None
    # Stackwright's own namespaces hold only its settings: a slip there read None.
    with pytest.raises(UsageError) as caught:
        Config("kubernetes").get("name")
    assert str(caught.value) == (
        f"{__file__}:{caught.tb.tb_lineno}: configuration kubernetes:name is no setting of "
        "Stackwright's kubernetes namespace, which takes cluster, context, kubeconfig, "
        "namespace, timeout; did you mean kubernetes:namespace?"
    )


@pytest.mark.parametrize(
    ("read", "said"),
    [
        (lambda: Config().get("shop:replicas"), "sw.Config('shop').get('replicas')"),
        (lambda: Config().require_int("kubernetes:timeout"), "sw.Config('kubernetes')"),
        (lambda: Config("app").get_secret("shop:password"), "(Config() reads app:NAME)"),
    ],
)
def test_a_key_read_with_its_namespace_says_how_to_read_it(
    program: Program, read: Any, said: str
) -> None:
    """A key copied from `config ls` (`shop:replicas`) read `shop:shop:replicas`, which no
    stack can hold: None without a word, as Pulumi's does."""
    with pytest.raises(UsageError, match="names its namespace: read it with") as caught:
        read()
    assert said in str(caught.value)


def test_secrets_come_back_as_secret_outputs(program: Program) -> None:
    cfg = Config()
    password = cfg.require_secret("password")
    assert password.is_secret
    resolved = password.resolve(lambda resource: None)
    assert isinstance(resolved, Secret) and resolved.value == "hunter2"
    derived = password.apply(lambda p: f"user:{p}")
    assert derived.is_secret
    maybe = cfg.get_secret("password")
    assert maybe is not None and maybe.is_secret
    assert cfg.get_secret("absent") is None


def test_secret_getters_take_a_default_as_pulumis_do(program: Program) -> None:
    """`cfg.get_secret("token", "dev-token")` as in Pulumi's Python SDK: the default comes
    back as a secret Output when the key is not set (it was a TypeError)."""
    cfg = Config()

    def value(out: Any) -> Any:
        resolved = out.resolve(lambda resource: None)
        assert out.is_secret and isinstance(resolved, Secret)
        return resolved.value

    assert value(cfg.get_secret("absent", "fallback")) == "fallback"
    assert value(cfg.get_secret("password", "fallback")) == "hunter2"
    assert value(cfg.get_secret_int("absent", 5)) == 5
    assert value(cfg.get_secret_int("replicas", 5)) == 3
    assert value(cfg.get_secret_float("absent", 0.5)) == 0.5
    assert value(cfg.get_secret_bool("absent", False)) is False
    assert value(cfg.get_secret_object("absent", {"a": 1})) == {"a": 1}
    assert cfg.get_secret_int("absent") is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda cfg: cfg.require("absent"),
            "missing required configuration shop:absent for stack dev: "
            "set it with `stackwright config set absent VALUE`",
        ),
        (
            lambda cfg: cfg.require_int("absent"),
            "missing required configuration shop:absent for stack dev: "
            "set it with `stackwright config set absent VALUE`",
        ),
        (
            lambda cfg: Config("kubernetes").require("context"),
            "missing required configuration kubernetes:context for stack dev: "
            "set it with `stackwright config set kubernetes:context VALUE`",
        ),
        (
            lambda cfg: cfg.get_int("bad_int"),
            "configuration shop:bad_int must be an integer (got 'three'); "
            "set it with `stackwright config set bad_int 3`",
        ),
        (
            lambda cfg: cfg.get_int("float_int"),
            "configuration shop:float_int must be an integer (got 2.5); "
            "set it with `stackwright config set float_int 3`",
        ),
        (
            lambda cfg: cfg.get_int("bool_int"),
            "configuration shop:bool_int must be an integer (got true); "
            "set it with `stackwright config set bool_int 3`",
        ),
        (  # as `config get` shows it, not Python's {'team': 'b'}
            lambda cfg: cfg.get_int("typed_labels"),
            """configuration shop:typed_labels must be an integer (got {"team": "b"}); """
            "set it with `stackwright config set typed_labels 3`",
        ),
        (
            lambda cfg: cfg.get_float("name"),
            "configuration shop:name must be a number (got 'web'); "
            "set it with `stackwright config set name 0.5`",
        ),
        (
            lambda cfg: cfg.get_bool("bad_bool"),
            "configuration shop:bad_bool must be true or false (got 'maybe'); "
            "set it with `stackwright config set bad_bool true`",
        ),
        (
            lambda cfg: cfg.get_object("bad_json"),
            "configuration shop:bad_json must be JSON (got '{nope'); "
            """set it with `stackwright config set bad_json '{"a": 1}'`""",
        ),
        (
            # A secret's value is never shown, even in an error, and the command that fixes
            # it keeps it secret (it said `config set password 3`: stored in plain text).
            lambda cfg: cfg.get_int("password"),
            "configuration shop:password must be an integer (got [secret]); "
            "set it with `stackwright config set --secret password 3`",
        ),
    ],
)
def test_bad_or_missing_values_name_the_key(program: Program, call: Any, message: str) -> None:
    with pytest.raises(UsageError) as info:
        call(Config())
    assert str(info.value) == message


def test_a_missing_secret_says_to_set_it_as_a_secret() -> None:
    prog = Program(project="shop", stack="prod", secret_keys=frozenset({"shop:token"}))
    with running(prog), pytest.raises(UsageError) as info:
        Config().require_secret("token")
    assert str(info.value) == (
        "missing required configuration shop:token for stack prod: "
        "set it with `stackwright config set --secret token VALUE`"
    )


def test_config_outside_a_program_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="while Stackwright runs a program"):
        Config()


def test_reading_a_secret_as_plain_warns_and_reading_it_as_secret_does_not(
    program: Program,
) -> None:
    cfg = Config()
    assert cfg.require_secret("password").is_secret and cfg.get_secret("password") is not None
    assert program.notes == []
    assert cfg.get("password") == "hunter2", "handed out plain, as Pulumi does"
    assert cfg.require("password") == "hunter2"
    (note,) = program.notes  # once, however often it is read
    assert note.startswith("configuration shop:password is a secret, but the program reads it")
    assert "require_secret" in note


def test_a_plain_read_of_a_secret_hands_its_secret_parts_to_the_engine(
    program: Program,
) -> None:
    cfg = Config()
    cfg.require_secret("password")
    assert program.read_plain == set(), "read as a secret: its Output is sealed where it goes"
    cfg.get("password")
    assert program.read_plain == {"hunter2"}
    # Of a key set with `--path db.password`, only that part; a number as its text.
    program.config = {**CONFIG, "shop:db": {"password": "pw-1234", "host": "h"}, "shop:port": 5432}
    program.secret_keys = frozenset({"shop:password", "shop:db", "shop:port"})
    program.secret_parts = {"shop:db": ("pw-1234",)}
    assert cfg.require_object("db") == {"password": "pw-1234", "host": "h"}
    assert cfg.get_int("port") == 5432
    assert program.read_plain == {"hunter2", "pw-1234", "5432"}
    assert all("the stack keeps the value itself encrypted" in note for note in program.notes)
