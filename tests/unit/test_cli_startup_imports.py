"""What every `stackwright` command pays before it runs: modules it does not need stay out."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from stackwright.cli.main import main

#: Loaded only by the code that uses them: a `wait-for` JSONPath, a quantity compared for drift.
_ON_DEMAND = ("stackwright.providers.kubernetes.jsonpath", "fractions", "decimal")


def test_starting_the_cli_loads_no_module_only_rare_paths_use() -> None:
    code = (
        "import sys\n"
        "import stackwright.cli.main\n"
        f"print(sorted(m for m in {_ON_DEMAND!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter has loaded after running `statement`."""
    code = f"import sys\n{statement}\nprint(sorted(m for m in {modules!r} if m in sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return list(ast.literal_eval(result.stdout.strip().splitlines()[-1]))


#: The engine, the operations and the programming model (~0.1 s of imports): only the
#: commands that run an operation or a program import them, not `stack ls` or `--version`.
#: (`stackwright.automation.stack` itself is in sys.modules, as a lazy module: run, it
#: would import these.)
_OPERATIONS = (
    "asyncio",  # ~15 ms; `stack ls` reads the store without it
    "ssl",  # only `cluster start` waits for a server over TLS
    "stackwright.engine.operations",
    "stackwright.engine.execute",
    "stackwright.providers.kubernetes",
    "stackwright.sdk.resource",
    "stackwright.sdk.config",
)


def test_starting_the_cli_loads_neither_the_engine_nor_the_programming_model() -> None:
    assert _loaded_after("import stackwright.cli.main", _OPERATIONS) == []


def test_importing_the_packages_loads_what_they_export_only_on_first_use() -> None:
    modules = ("stackwright.engine.operations", "stackwright.sdk")
    assert _loaded_after("import stackwright, stackwright.automation", modules) == []
    used = "import stackwright as sw, stackwright.automation as auto\nsw.Output, auto.Workspace"
    assert _loaded_after(used, modules) == list(modules)


def test_the_packages_export_the_same_objects_as_their_modules() -> None:
    import stackwright as sw
    import stackwright.automation as auto
    from stackwright import sdk
    from stackwright.automation import stack
    from stackwright.engine import events

    assert all(getattr(sw, name) is getattr(sdk, name) for name in sw.__all__)
    assert (auto.Selection, auto.Workspace) == (stack.Selection, stack.Workspace)
    assert auto.event_json is events.event_json
    assert set(sw.__all__) <= set(dir(sw)) and set(auto.__all__) <= set(dir(auto))
    with pytest.raises(AttributeError, match="module 'stackwright' has no attribute 'Resourse'"):
        _ = sw.Resourse  # type: ignore[attr-defined]


#: What only an operation's display needs: the engine's events and plans, the policy packs
#: (~50 ms). Each is imported only when the module that imports it runs.
_DISPLAYS = ("stackwright.engine.plan", "stackwright.policy._core", "stackwright.sdk.output")

#: Commands that open a stack to read or edit what is stored, and run no operation.
_STORED_COMMANDS = (
    ["stack", "ls"],
    ["config", "get", "replicas"],
    ["config", "set", "replicas", "3"],
    ["config"],
    ["config", "rm", "replicas"],
    ["stack"],
    ["stack", "output"],
    ["stack", "history"],
    ["stack", "export"],
    ["stack", "select", "dev"],
    ["stack", "select", "--create", "qa"],
    ["stack", "init", "staging"],
    ["stack", "tag", "set", "env", "dev"],
    ["stack", "tag", "ls"],
    ["cancel"],
)


@pytest.mark.parametrize("args", _STORED_COMMANDS, ids=" ".join)
def test_commands_that_run_no_operation_load_neither_the_engine_nor_its_client(
    project: Path, args: list[str]
) -> None:
    # `config get` and `stack output` opened the stack through the operations' Workspace,
    # which imports the engine, the Kubernetes provider and asyncio (~0.1 s at each start);
    # and every command imported the displays of operations.
    main(["config", "set", "replicas", "2"])
    # A command that fails exits non-zero, and fails the test: each one here does its work.
    run = f"from stackwright.cli.main import main\nmain({args!r})"
    assert _loaded_after(run, (*_OPERATIONS, "lightkube", *_DISPLAYS)) == []


def test_a_module_the_cli_imports_on_first_use_is_its_packages_attribute() -> None:
    # As an import binds it: a script that imports the CLI, then `stackwright.policy`, reads
    # `stackwright.policy.Level` (it was "module 'stackwright' has no attribute 'policy'").
    code = (
        "import stackwright.cli.main\n"
        "import stackwright.automation.stack, stackwright.engine.events, stackwright.policy\n"
        "print(stackwright.policy.Level.ADVISORY.value, stackwright.engine.events.plural(2, 'x'),\n"
        "      stackwright.automation.stack.Workspace.__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stdout.split() == ["advisory", "2", "xs", "Workspace"], result.stderr


def test_checking_a_built_in_kind_before_a_run_loads_no_cel() -> None:
    """`preview` and `up` check a program's built-in kinds with the local cluster's schemas;
    the CEL interpreter (~10 ms of imports) is for a CRD's `x-kubernetes-validations`."""
    # (celrules itself is in sys.modules, as a lazy module: run, it would import these.)
    cel = ("stackwright.localcluster.cel", "stackwright.localcluster.cel_kubernetes")
    check = (
        "from stackwright.localcluster.validation import builtin_mismatches\n"
        "assert builtin_mismatches({'apiVersion': 'apps/v1', 'kind': 'Deployment',"
        " 'metadata': {'name': 'w'}, 'spec': {'replicas': 'three'}})\n"
    )
    assert _loaded_after(check, cel) == []
    rules = (
        "from stackwright.localcluster.validation import validate_custom\n"
        "schema = {'type': 'object', 'x-kubernetes-validations': [{'rule': 'self.a > 1'}],"
        " 'properties': {'a': {'type': 'integer'}}}\n"
        "assert validate_custom({'a': 0}, schema)\n"
    )
    assert _loaded_after(rules, cel) == list(cel)


def test_checking_objects_with_no_quantity_before_a_run_loads_no_quantities() -> None:
    """The check of a built-in kind loaded quantities.py with fractions and decimal (~2 ms
    of every `up` and `preview`), which only a quantity field (`resources.limits`) needs."""
    modules = ("stackwright.localcluster.quantities", "fractions", "decimal")
    check = (
        "from stackwright.localcluster.decoding import builtin_mismatches\n"
        "assert not builtin_mismatches({'apiVersion': 'v1', 'kind': 'ConfigMap',"
        " 'metadata': {'name': 'c'}, 'data': {'a': 'b'}})\n"
    )
    assert _loaded_after(check, modules) == []
    limits = (
        "from stackwright.localcluster.decoding import builtin_mismatches\n"
        "assert builtin_mismatches({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},"
        " 'spec': {'containers': [{'name': 'c', 'resources': {'limits': {'cpu': '1GB'}}}]}})\n"
    )
    assert _loaded_after(limits, modules) == sorted(modules)


def test_a_run_loads_helm_s_module_only_for_a_helm_release() -> None:
    # The engine's wiring imported it (~4.5 ms of every preview and up) for its Helm
    # releases; a chart (`k8s.helm.v4.Chart`) imports it as the program declares one.
    run = "import stackwright.automation.stack, stackwright.engine.wiring"
    assert _loaded_after(run, ("stackwright.kubernetes.helm", "glob")) == []


def test_a_stack_with_no_policy_pack_loads_no_policy_evaluation() -> None:
    # Every preview and up reads the stack's policy settings (`stackwright.policy.Settings`):
    # the package imported its evaluation, pack loading and SARIF with them (~3 ms), and its
    # policies, packs and subjects (`_core`, ~3 ms), which only a stack with packs (or
    # `policy check`) uses.
    modules = (
        "stackwright.policy._core",
        "stackwright.policy._evaluate",
        "stackwright.policy._load",
        "stackwright.policy._sarif",
    )
    run = (
        "import stackwright.automation.stack, stackwright.engine.policy_gate, "
        "stackwright.cli.render\n"
        "from stackwright.policy import Level, Settings\n"
        "Settings.from_config({}, 'Stackwright.dev.yaml', default_namespace='default')"
    )
    assert _loaded_after(run, modules) == []
    used = "from stackwright.policy import evaluate, select_packs, to_sarif"
    assert _loaded_after(used, modules) == list(modules)


def test_the_policy_package_exports_the_same_objects_as_its_modules() -> None:
    from stackwright import policy
    from stackwright.policy import _core, _evaluate, _levels, _load, _sarif

    assert (policy.PolicyPack, policy.policy) == (_core.PolicyPack, _core.policy)
    assert policy.Level is _levels.Level is _core.Level
    assert (policy.Report, policy.evaluate) == (_evaluate.Report, _evaluate.evaluate)
    assert (policy.select_packs, policy.to_sarif) == (_load.select_packs, _sarif.to_sarif)
    assert set(policy.__all__) <= set(dir(policy))
    assert all(getattr(policy, name) is not None for name in policy.__all__)


def test_only_a_command_about_a_local_cluster_runs_its_lifecycle_module() -> None:
    # The `cluster` commands' module and the operations imported it (~1.5 ms of every
    # command, `--version` too); `cluster …`, `policy audit --cluster` and a stack whose
    # `kubernetes:cluster` names a local cluster use it. (The CLI holds it as a lazy module,
    # in sys.modules, not run.)
    operations = "import stackwright.automation.stack, stackwright.automation.policy\n"
    cli = (
        "import stackwright.cli.main\n"
        f"{operations}stackwright.automation.stack.Workspace, stackwright.cli.cluster.DEFAULT_NAME\n"
    )
    ran = (
        "module = sys.modules.get('stackwright.localcluster.lifecycle')\n"
        "print(module is not None and type(module).__name__ != '_Unloaded')"
    )
    used = "stackwright.cli.cluster.lifecycle.info\n"
    for statements, expected in ((operations, "False"), (cli, "False"), (cli + used, "True")):
        result = subprocess.run(
            [sys.executable, "-c", f"import sys\n{statements}{ran}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert result.stdout.strip() == expected, statements


def test_a_command_that_reads_no_project_file_loads_no_yaml(tmp_path: Path) -> None:
    # The CLI imported PyYAML as it started (~14 ms: its reader compiles one large regex),
    # which `--version`, `--help` and `cluster list` never use; a command that reads a
    # project's files loads it as it reads them.
    (tmp_path / "Stackwright.yaml").write_text("name: shop\n")
    ran = (
        "module = sys.modules.get('yaml')\n"
        "print(module is not None and type(module).__name__ != '_Unloaded')"
    )
    version = "from stackwright.cli.main import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    read = "from stackwright.automation.workspace import Project\nProject.load(Path.cwd())"
    for statements, expected in (
        ("import stackwright.cli.main", "False"),
        (version, "False"),
        (f"import stackwright.cli.main\n{read}", "True"),
    ):
        code = f"import sys\nfrom pathlib import Path\n{statements}\n{ran}"
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert result.stdout.strip().splitlines()[-1:] == [expected], statements + result.stderr


def test_a_run_loads_what_rare_paths_use_only_on_them() -> None:
    # `secrets` (with hmac) for a generated password, `tempfile` for a kubeconfig's key data
    # or a provider that renders files, `pprint` for the code `import` prints: ~1.5 ms of
    # every `up` and `preview` that use none of them.
    run = (
        "import stackwright.cli.main, stackwright.automation.stack as s, stackwright.engine.wiring\n"
        "s.Workspace"
    )
    assert _loaded_after(run, ("hmac", "pprint", "secrets", "tempfile")) == []


def test_an_operation_loads_what_import_adopts_only_for_an_import() -> None:
    # The classes of `import` (an entry, a request, an object adopted: ~2 ms) were
    # created by every operation's start; `automation.stack` still names them.
    run = "import stackwright.cli.main, stackwright.automation.stack as s\ns.Workspace"
    assert _loaded_after(run, ("stackwright.automation.adopted",)) == []
    named = f"{run}\nfrom stackwright.automation.stack import ImportEntry, Imported"
    assert _loaded_after(named, ("stackwright.automation.adopted",)) == [
        "stackwright.automation.adopted"
    ]
    from stackwright.automation import adopted, stack

    assert (stack.ImportEntry, stack.Imported) == (adopted.ImportEntry, adopted.Imported)
    assert {"ImportEntry", "Imported"} <= set(dir(stack))
