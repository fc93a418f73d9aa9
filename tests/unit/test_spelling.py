"""How a program's language spells resource options: every option of `ResourceOptions`
has a YAML spelling or is listed as a Python program's only, so that no message about an
option can fail for want of its name."""

from __future__ import annotations

from dataclasses import fields

import pytest

from stackwright.sdk import ResourceOptions
from stackwright.sdk.spelling import PYTHON, PYTHON_ONLY_OPTIONS, YAML


@pytest.mark.parametrize("option", [f.name for f in fields(ResourceOptions)])
def test_every_resource_option_has_a_yaml_spelling_or_is_python_only(option: str) -> None:
    # A field added to ResourceOptions and to neither table made YAML.name raise KeyError
    # in whichever message first named it.
    assert YAML.has(option) != (option in PYTHON_ONLY_OPTIONS), (
        f"ResourceOptions.{option}: give it a YAML spelling in YAML_OPTIONS, or list it in "
        "PYTHON_ONLY_OPTIONS with what a YAML program does instead"
    )
    assert PYTHON.has(option) and PYTHON.name(option) == option


def test_the_python_only_table_lists_only_options_there_are() -> None:
    assert set(PYTHON_ONLY_OPTIONS) <= {f.name for f in fields(ResourceOptions)}


@pytest.mark.parametrize("option", sorted(PYTHON_ONLY_OPTIONS))
def test_a_python_only_option_keeps_its_python_name_in_yaml(option: str) -> None:
    # `name` raised KeyError for an option a YAML program has not.
    assert not YAML.has(option)
    assert YAML.name(option) == option


def test_yaml_names_options_as_a_yaml_program_writes_them() -> None:
    assert YAML.name("retain_on_delete") == "retainOnDelete"
    assert YAML.name("custom_timeouts.delete") == "customTimeouts.delete"
    assert YAML.name("id") == "get.id"
