"""Where secrets are found by position and by value: masks for displays, secret paths that
follow a value the cluster moved, code printed for an imported Secret, key files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.automation.secrets import Where, _key_file
from stackwright.automation.stack import python_code, yaml_code
from stackwright.engine import records
from stackwright.engine.events import SECRET_TEXT, mask_at, masked
from stackwright.engine.records import SecretTexts, with_outputs
from stackwright.errors import UsageError, forget_secrets, redact, redact_parts, remember_secret
from stackwright.model import ResourceState, always_secret


def test_masked_walks_maps_and_lists() -> None:
    value = {"a": [{"b": "x", "c": "keep"}], "d": "y", "e": {"f": "z"}}
    assert masked(value, ["a[0].b", "d", "e"]) == {
        "a": [{"b": SECRET_TEXT, "c": "keep"}],
        "d": SECRET_TEXT,
        "e": SECRET_TEXT,
    }
    assert masked(["p", "q"], ["[1]"]) == ["p", SECRET_TEXT]
    assert masked("whole", [""]) == SECRET_TEXT


def test_a_change_at_a_list_path_masks_its_secret_elements() -> None:
    env = [{"name": "A", "value": "a"}, {"name": "DB", "value": "pw"}]
    path = "spec.template.spec.containers[0].env"
    shown = mask_at(path, env, [f"{path}[1].value"])
    assert shown == [{"name": "A", "value": "a"}, {"name": "DB", "value": SECRET_TEXT}]
    assert mask_at(f"{path}[1].value", "pw", [f"{path}[1].value"]) == SECRET_TEXT


def test_a_secret_the_cluster_moved_gets_a_secret_path_where_it_now_is() -> None:
    env = [{"name": "A", "value": "a"}, {"name": "DB", "value": "pw-value"}]
    state = ResourceState(
        urn="urn:sw:dev::p::kubernetes:apps/v1:Deployment::web",
        type="kubernetes:apps/v1:Deployment",
        inputs={"spec": {"env": env}},
        secret_paths=("spec.env[1].value",),
    )
    live = {"spec": {"env": [{"name": "Z", "value": "z"}, *env]}}
    recorded = with_outputs(state, live)
    assert recorded.outputs == live
    assert recorded.secret_paths == ("spec.env[1].value", "spec.env[2].value")
    plain = with_outputs(state, {"spec": {"env": env}})
    assert plain.secret_paths == state.secret_paths, "nothing moved: nothing added"


def test_a_moved_secret_that_json_escapes_is_found_as_any_other() -> None:
    # `with_outputs` first searches the object's JSON (escaped), then walks it: a value
    # with quotes, backslashes or a newline, copied to a text or a key, must still be found.
    value = 'pw "q" \\ line\nend'
    state = ResourceState(
        urn="urn:sw:dev::p::kubernetes:core/v1:Secret::s",
        type="kubernetes:core/v1:Secret",
        inputs={"apiVersion": "v1", "kind": "Secret", "stringData": {"pw": value}},
        secret_paths=("data", "stringData"),
    )
    copied = {"metadata": {"annotations": {"note": f"was {value}!"}}, "stringData": {"pw": value}}
    assert with_outputs(state, copied).secret_paths == (
        "data",
        "stringData",
        "metadata.annotations.note",
    )
    keyed = {"metadata": {"labels": {}}, "spec": {value: "x"}, "data": {"pw": "eA=="}}
    assert with_outputs(state, keyed).secret_paths == ("data", "stringData", "spec")
    at_home = {"kind": "Secret", "stringData": {"pw": value}, "data": {"pw": value}}
    assert with_outputs(state, at_home).secret_paths == state.secret_paths


#: Texts whose JSON spelling differs from themselves (quotes, backslashes, control
#: characters), and others JSON keeps as they are (non-ASCII, U+2028).
_TEXTS = st.text(alphabet=st.sampled_from(list('ab"\\\n\x00\x7f\u2028é😀/ ')), max_size=8)
_KEYS = st.one_of(
    _TEXTS,
    _TEXTS.map(lambda t: f"f:{t}"),  # a managedFields key naming a field,
    _TEXTS.map(lambda t: f'k:{{"name":"{t}"}}'),  # a list item by key,
    _TEXTS.map(lambda t: f'v:"{t}"'),  # a list item by value
)
_VALUES = st.recursive(
    st.one_of(_TEXTS, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    secret=_TEXTS,
    key=_TEXTS,
    spec=_VALUES,
    fields=_VALUES,
    others=st.lists(_TEXTS, max_size=3),
)
def test_the_search_of_the_json_first_finds_what_the_walk_finds(
    secret: str, key: str, spec: Any, fields: Any, others: list[str]
) -> None:
    # `with_outputs` skips the walk of an object whose JSON holds no secret text: it must
    # never skip one the walk would find (a value, a part, a key; in a managedFields key).
    state = ResourceState(
        urn="urn:sw:dev::p::kubernetes:core/v1:ConfigMap::c",
        type="kubernetes:core/v1:ConfigMap",
        inputs={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "data": {key: secret},
            "spec": {"x": [f"{secret}{key}", {"y": secret[::-1]}]},
        },
        secret_paths=("data", "spec.x"),
    )
    live = {
        "metadata": {"managedFields": [{"fieldsV1": fields}], "labels": spec},
        "spec": spec,
        "data": {key: secret},
    }
    searched = SecretTexts.of(others)
    first = with_outputs(state, live, searched)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "_may_hold", lambda *_: True)
        assert first == with_outputs(state, live, searched)


def test_a_refresh_encodes_the_stack_s_secrets_once_not_once_per_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A refresh searches every object for every secret of the stack (`SecretTexts`): with
    # 100 of them, encoding each as JSON for each object made the search before the walk
    # twice the walk's cost.
    searched = SecretTexts.of(f"secret-value-{i}" for i in range(100))
    state = ResourceState(
        urn="urn:sw:dev::p::kubernetes:core/v1:ConfigMap::c",
        type="kubernetes:core/v1:ConfigMap",
        inputs={"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}},
    )
    encoded: list[Any] = []
    dumps = orjson.dumps

    def counted(value: Any, *args: Any) -> bytes:
        encoded.append(value)
        return dumps(value, *args)

    monkeypatch.setattr(orjson, "dumps", counted)
    for n in range(20):
        live = {"metadata": {"name": f"c{n}"}, "data": {"a": "plain"}}
        assert with_outputs(state, live, searched).secret_paths == ()
    assert [text for text in encoded if isinstance(text, str)] == []


def test_an_imported_secret_is_secret_and_its_code_prints_no_value() -> None:
    live = {"apiVersion": "v1", "kind": "Secret", "data": {"pw": "c2VjcmV0"}, "type": "Opaque"}
    paths = always_secret(live)
    assert paths == ("data", "stringData")
    code = python_code("kubernetes:core/v1:Secret", "imp", live, paths)
    assert "c2VjcmV0" not in code
    assert "string_data={'pw': cfg.require_secret('imp-pw')}" in code
    assert "#   stackwright config set --secret imp-pw -- <plain value>" in code
    assert "type='Opaque'" in code, "the rest is printed as it is"
    # A binary value cannot be stringData: it stays data, set base64.
    binary = {**live, "data": {"pw": "c2VjcmV0", "bin": "AP8="}}
    code = python_code("kubernetes:core/v1:Secret", "imp", binary, paths)
    assert "data={'pw': cfg.require_secret('imp-pw'), 'bin': cfg.require_secret('imp-bin')}" in code
    assert "string_data" not in code
    assert "#   stackwright config set --secret imp-bin -- <base64 value>" in code
    # Told only that data is secret, its values printed as stringData are not shown either.
    plain = {**live, "data": {"pw": "UGw0MW5WNGx1ZQ=="}}  # Pl41nV4lue
    for printer in (python_code, yaml_code):
        code = printer("kubernetes:core/v1:Secret", "imp", plain, ("data",))
        assert "Pl41nV4lue" not in code and "UGw0MW5WNGx1ZQ" not in code


def test_redact_finds_a_secret_escaped_as_json_or_go_quote_strings() -> None:
    odd = 'Zq7"Sec ret/P\u00e442x'
    remember_secret(odd)
    try:
        assert redact(f'Invalid value: "{odd}"') == 'Invalid value: "[secret]"'
        assert redact('Invalid value: "Zq7\\"Sec ret/P\\u00e442x"') == 'Invalid value: "[secret]"'
        assert redact('"Zq7\\"Sec ret/Pä42x"') == '"[secret]"'
        assert redact(f"shouted {odd.upper()}, whispered {odd.lower()}") == (
            "shouted [secret], whispered [secret]"
        )
    finally:
        forget_secrets()


def test_a_part_of_a_secret_is_masked_but_not_inside_a_mask_already_there() -> None:
    """An apply callback's `ValueError("bad " + value)` of the secret `s3cretvalue` said
    `bad [se[secret]]`: the search for parts found `cret` of the secret in the `[secret]`
    that stood for the whole of it."""
    remember_secret("s3cretvalue")
    try:
        assert redact_parts("bad s3cretvalue", ["s3cretvalue"]) == "bad [secret]"
        assert redact_parts("got s3cret, then s3cretvalue", ["s3cretvalue"]) == (
            "got [secret], then [secret]"
        )
        assert redact_parts("a [secret] was given", ["xxsecretxx"]) == "a [secret] was given"
    finally:
        forget_secrets()


def test_a_key_file_others_can_read_or_write_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    key = folder / "p.dev.key"
    made = _key_file(key, Where("p", "dev"), create=True)
    assert len(made) == 32
    assert (key.stat().st_mode & 0o777, folder.stat().st_mode & 0o777) == (0o600, 0o700)
    os.chmod(key, 0o644)
    with pytest.raises(UsageError, match=r"is open to other users \(mode 644\): `chmod 600"):
        _key_file(key, Where("p", "dev"), create=False)
    os.chmod(key, 0o600)
    os.chmod(folder, 0o777)
    with pytest.raises(UsageError, match=r"folder .* is open to other users"):
        _key_file(key, Where("p", "dev"), create=False)
    os.chmod(folder, 0o700)
    assert _key_file(key, Where("p", "dev"), create=False) == made


def test_a_secret_inside_a_longer_live_text_makes_that_text_secret() -> None:
    state = ResourceState(
        urn="urn:sw:dev::p::kubernetes:core/v1:Pod::pod",
        type="kubernetes:core/v1:Pod",
        inputs={"spec": {"containers": [{"image": "reg.example.com/app-s3cret-tag:1"}]}},
        secret_paths=("spec.containers[0].image",),
    )
    last_applied = (
        '{"kind":"Pod","spec":{"containers":[{"image":"reg.example.com/app-s3cret-tag:1"}]}}'
    )
    live = {
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied}
        },
        "spec": {"containers": [{"image": "reg.example.com/app-s3cret-tag:1"}]},
        "status": {
            "containerStatuses": [
                {
                    "state": {
                        "waiting": {
                            "message": 'Back-off pulling image "reg.example.com/app-s3cret-tag:1"'
                        }
                    }
                }
            ]
        },
    }
    recorded = with_outputs(state, live)
    assert set(recorded.secret_paths) == {
        "spec.containers[0].image",
        "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
        "status.containerStatuses[0].state.waiting.message",
    }


def test_a_server_url_in_messages_has_no_credentials() -> None:
    from stackwright.providers.kubernetes.client import _without_userinfo

    assert _without_userinfo("https://user:tok3n@10.0.0.1:6443/api") == "https://10.0.0.1:6443/api"
    assert _without_userinfo("https://10.0.0.1:6443") == "https://10.0.0.1:6443"
    assert _without_userinfo("not a url") == "not a url"
