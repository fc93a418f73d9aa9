"""`import --parent` tells the components whose manifests declare their children by type
(`MANIFEST_PARENTS`, which loads none of them): every such component, Python's classes and a
YAML program's types, is in it, and nothing else."""

from __future__ import annotations

from stackwright.engine.yaml_program import COMPONENTS
from stackwright.kubernetes.helm import CHART_TYPE
from stackwright.kubernetes.kustomize import Directory
from stackwright.kubernetes.provider import MANIFEST_PARENTS
from stackwright.kubernetes.yaml import ConfigFile, ConfigGroup


def test_every_component_of_manifests_and_nothing_else() -> None:
    python = {ConfigFile.TYPE, ConfigGroup.TYPE, Directory.TYPE, CHART_TYPE}
    yaml = {token for token, component in COMPONENTS.items() if component.rendered}
    assert python | yaml == MANIFEST_PARENTS
