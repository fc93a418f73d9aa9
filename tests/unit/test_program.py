"""Running a user's Python program: what it declares, and one clear line when it fails."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from stackwright.engine.program import run_program
from stackwright.errors import UsageError
from stackwright.sdk.config import MissingConfiguration


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def run(main: Path, **config: str) -> object:
    return run_program(
        main, project="shop", stack="dev", config={f"shop:{k}": v for k, v in config.items()}
    )


def test_a_program_declares_resources_and_exports(tmp_path: Path) -> None:
    main = write(
        tmp_path / "__main__.py",
        """\
        import stackwright.kubernetes as k8s
        from stackwright.sdk.config import Config
        from stackwright.sdk.context import export

        cfg = Config()
        web = k8s.apps.v1.Deployment("web", spec={"replicas": cfg.get_int("replicas") or 2})
        export("replicas", web.spec["replicas"])
        """,
    )
    path_before = list(sys.path)
    program = run_program(tmp_path, project="shop", stack="dev", config={"shop:replicas": "3"})
    assert [r.urn for r in program.resources] == [
        "urn:sw:dev::shop::kubernetes:apps/v1:Deployment::web"
    ]
    assert program.resources[0].props["spec"] == {"replicas": 3}
    assert program.resources[0].declared_at.file == str(main)
    assert set(program.exports) == {"replicas"}
    assert sys.path == path_before


def test_a_failing_program_names_its_file_and_line(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.py",
        """\
        import stackwright.kubernetes as k8s

        k8s.core.v1.ConfigMap("c")
        ratio = 1 / 0
        """,
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{main}:4: the program failed: ZeroDivisionError: division by zero"
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_misused_output_names_the_users_line_not_stackwrights(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.py",
        """\
        import stackwright.kubernetes as k8s

        svc = k8s.core.v1.Service("web")
        if svc.spec:
            pass
        """,
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == (
        f"{main}:4: the program failed: TypeError: an Output has no truth value while the "
        "program runs; use .apply(...) to branch on its value (for a configuration default, "
        "pass it: cfg.get_secret(key, default))"
    )


@pytest.mark.parametrize(
    ("call", "hint"),
    [
        ('k8s.core.v1.ConfigMap("c", dta={})', "ConfigMap.__init__() got an unexpected keyword "
         "argument 'dta' (did you mean 'data'?)"),
        ('k8s.core.v1.Secret("s", stringData={})', "Secret.__init__() got an unexpected keyword "
         "argument 'stringData' (did you mean 'string_data'? top-level arguments are in "
         "snake_case)"),
        ('k8s.core.v1.ConfigMap("c", opts=sw.ResourceOptions(dependson=[]))',
         "ResourceOptions.__init__() got an unexpected keyword argument 'dependson' (did you "
         "mean 'depends_on'?)"),
        ('k8s.core.v1.ConfigMap("c", zzz=1)', "ConfigMap.__init__() got an unexpected keyword "
         "argument 'zzz'"),  # nothing close: no hint
    ],
)  # fmt: skip
def test_a_misspelt_keyword_of_a_stackwright_class_gets_a_hint(
    tmp_path: Path, call: str, hint: str
) -> None:
    # As a YAML program's misspelt field is told "did you mean"; Python 3.11 names only the
    # function.
    main = write(
        tmp_path / "main.py",
        f"import stackwright as sw\nimport stackwright.kubernetes as k8s\n{call}\n",
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{main}:3: the program failed: TypeError: {hint}"


@pytest.mark.parametrize(
    ("line", "error", "hint"),
    [
        ("import pulumi", "ModuleNotFoundError: No module named 'pulumi'",
         "write `import stackwright as sw` for `import pulumi`"),
        ("from pulumi_kubernetes.apps.v1 import Deployment",
         "ModuleNotFoundError: No module named 'pulumi_kubernetes'",
         "write `import stackwright.kubernetes as k8s` for `import pulumi_kubernetes as k8s`"),
        ("import pulumi_random", "ModuleNotFoundError: No module named 'pulumi_random'",
         "`stackwright.kx.RandomPassword` makes a password"),
        ("from stackwright.kubernetes.apps.v1 import DeploymentSpecArgs",
         "ImportError: cannot import name 'DeploymentSpecArgs'",
         "Stackwright has no Pulumi args classes: write DeploymentSpec's fields as a plain dict "
         "in Kubernetes' camelCase (typed as stackwright.kubernetes.apps.v1.DeploymentSpecDict)"),
        ("k8s.core.v1.ContainerArgs(name='web')",
         "AttributeError: module 'stackwright.kubernetes.core.v1' has no attribute "
         "'ContainerArgs'", "(typed as stackwright.kubernetes.core.v1.ContainerDict)"),
        ("from stackwright.kubernetes.core.v1 import ConfigMapInitArgs",
         "ImportError: cannot import name 'ConfigMapInitArgs'",
         'pass ConfigMap\'s fields as keyword arguments, ConfigMap("name", binary_data=..., '
         "data=..., immutable=..., metadata=...)"),
        ("from stackwright.kubernetes.meta.v1 import ObjectMetaArgs",
         "ModuleNotFoundError: No module named 'stackwright.kubernetes.meta'",
         "metadata is a plain dict in Kubernetes' spelling"),
        ("k8s.meta.v1.ObjectMetaArgs(name='x')",
         "AttributeError: module 'stackwright.kubernetes' has no attribute 'meta'",
         "metadata is a plain dict in Kubernetes' spelling"),
        ("k8s.yaml.v2.ConfigFile('app', file='app.yaml')",
         "AttributeError: module 'stackwright.kubernetes.yaml' has no attribute 'v2'",
         "`k8s.yaml.ConfigFile` and `k8s.yaml.ConfigGroup`"),
        ("from stackwright.kubernetes.helm.v3 import Chart",
         "ModuleNotFoundError: No module named 'stackwright.kubernetes.helm.v3'",
         "`k8s.helm.Chart` renders a chart into objects"),
        ("sw.Alias(parent=sw.ROOT_STACK_RESOURCE)",
         "AttributeError: module 'stackwright' has no attribute 'ROOT_STACK_RESOURCE'",
         "write sw.Alias(parent=None)"),
        ("k8s.Provider('p', kubeconfig='k', enable_server_side_apply=True)",
         "TypeError: Provider.__init__() got an unexpected keyword argument "
         "'enable_server_side_apply'", "Stackwright always applies server-side"),
        ("k8s.Provider('p', kubeconfig='k', enable_config_map_mutable=True)",
         "'enable_config_map_mutable'", "Stackwright always updates a ConfigMap in place"),
        ("sw.Alias(no_parent=True)", "unexpected keyword argument 'no_parent'",
         "write parent=None for a resource that had no parent"),
        ("sw.ResourceOptions(version='4.18.0')",
         "got an unexpected keyword argument 'version'", "Stackwright has no provider plugins"),
        ("sw.ResourceOptions(transformations=[lambda args: None])",
         "got an unexpected keyword argument 'transformations'",
         "write transforms=[fn], Pulumi's newer spelling"),
        ("sw.Output.unsecret(sw.Output.secret('x'))",
         "AttributeError: type object 'Output' has no attribute 'unsecret'",
         "a secret stays secret in Stackwright"),
        ("sw.runtime.is_dry_run()",
         "AttributeError: module 'stackwright' has no attribute 'runtime'",
         "write sw.is_dry_run() for pulumi.runtime.is_dry_run()"),
        ("k8s.core.v1.ConfigMap('c', {'data': {'a': 'b'}})",
         "must be a ResourceOptions (got dict)",
         "Stackwright takes no args object: pass the object's fields as keyword arguments"),
        ("k8s.helm.Chart('web', k8s.helm.ChartOpts(chart='nginx'))",
         "AttributeError: module 'stackwright.kubernetes.helm' has no attribute 'ChartOpts'",
         "Stackwright has no ChartOpts: pass its fields to k8s.helm.Chart as keyword arguments"),
        ("from stackwright.kubernetes.helm import Chart, LocalChartOpts",
         "ImportError: cannot import name 'LocalChartOpts'", "LocalChartOpts' path is chart="),
        ("k8s.helm.FetchOpts(repo='https://charts.example.com')",
         "has no attribute 'FetchOpts'", "give k8s.helm.Chart repository_opts={'repo': URL"),
        ("from stackwright.kubernetes.helm import RepositoryOptsArgs",
         "cannot import name 'RepositoryOptsArgs'", "repository_opts is a plain dict"),
        ("from stackwright.kubernetes.helm import ChartArgs",
         "cannot import name 'ChartArgs'",
         "pass Chart's fields as keyword arguments, Chart(\"name\", chart=..., namespace=..."),
        ("k8s.helm.Chart('web', {'chart': './charts/web'})",
         "Chart 'web': the second argument must be the chart",
         "Stackwright takes no args object: write Chart('web', chart=..., "
         "opts=sw.ResourceOptions(...))"),
    ],
)  # fmt: skip
def test_a_pulumi_idiom_stackwright_spells_otherwise_says_what_to_write(
    tmp_path: Path, line: str, error: str, hint: str
) -> None:
    """A Pulumi program being ported meets what Stackwright names otherwise or leaves out on
    purpose: its one line names the program's line and what to write instead."""
    main = write(
        tmp_path / "main.py",
        f"import stackwright as sw\nimport stackwright.kubernetes as k8s\n{line}\n",
    )
    with pytest.raises(UsageError) as info:
        run(main)
    message = str(info.value)
    assert f"{main}:3" in message and error in message and hint in message, message
    assert len(message.splitlines()) == 1


def test_a_missing_name_of_the_users_own_gets_no_pulumi_hint(tmp_path: Path) -> None:
    main = write(tmp_path / "main.py", "import stackwright as sw\nsw.nope()\n{}.foo\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value).endswith("AttributeError: module 'stackwright' has no attribute 'nope'")


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        ("page = k8x.core.v1.ConfigMap('page')",
         "NameError: name 'k8x' is not defined (did you mean 'k8s'?)"),
        ("k8s.apps.v1.Deploymnet('web')",
         "AttributeError: module 'stackwright.kubernetes.apps.v1' has no attribute "
         "'Deploymnet' (did you mean 'Deployment'?)"),
        ("replicas = 2\nspec = {'replicas': replica}",
         "NameError: name 'replica' is not defined (did you mean 'replicas'?)"),
        ("def f():\n    labels = {}\n    return lables\nf()",
         "NameError: name 'lables' is not defined (did you mean 'labels'?)"),
        ("x = nothing_like_it", "NameError: name 'nothing_like_it' is not defined"),
    ],
)  # fmt: skip
def test_a_misspelt_name_or_attribute_gets_pythons_hint(
    tmp_path: Path, lines: str, error: str
) -> None:
    """What `python __main__.py` would suggest (Python 3.11 prints it, but its
    `traceback` module, which the one-line error is made with, does not make it)."""
    main = write(
        tmp_path / "main.py",
        f"import stackwright as sw\nimport stackwright.kubernetes as k8s\n{lines}\n",
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value).partition(": the program failed: ")[2] == error


def test_a_field_check_that_explains_itself_gets_no_guess_from_outputs_methods(
    tmp_path: Path,
) -> None:
    """An Output's field check says what to write; Python's guess from the Output's own
    methods ('format' for `ports.port`) was appended to it and misled."""
    main = write(
        tmp_path / "main.py",
        "import stackwright.kubernetes as k8s\n"
        "svc = k8s.core.v1.Service('web', spec={'ports': [{'port': 80}]})\n"
        "port = svc.spec.ports.port\n",
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value).partition(": the program failed: ")[2] == (
        "AttributeError: Service 'web' has no field spec.ports.port (spec.ports is a list of "
        "ServicePort: take an item, spec.ports[0].port)"
    )


def test_a_misspelt_keyword_of_the_users_own_function_gets_no_hint(tmp_path: Path) -> None:
    main = write(tmp_path / "main.py", "def make(data=None):\n    pass\n\nmake(dta=1)\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value).endswith("make() got an unexpected keyword argument 'dta'")


def test_a_failure_in_a_helper_module_names_the_helper(tmp_path: Path) -> None:
    helper = write(
        tmp_path / "components.py",
        """\
        def make():
            return {}["missing"]
        """,
    )
    main = write(tmp_path / "main.py", "import components\n\ncomponents.make()\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{helper}:2: the program failed: KeyError: 'missing'"


def test_a_missing_or_mistyped_configuration_value_names_the_line_that_reads_it(
    tmp_path: Path,
) -> None:
    """A program reads many keys, some in modules of its own: the line that reads the key is
    named, as for the program's other mistakes, and `policy check` still learns the key."""
    helper = write(
        tmp_path / "settings.py",
        """\
        from stackwright.sdk.config import Config

        def replicas():
            return Config().get_int("replicas")
        """,
    )
    main = write(
        tmp_path / "main.py",
        """\
        from stackwright.sdk.config import Config
        import settings

        settings.replicas()
        Config().require("image")
        """,
    )
    with pytest.raises(MissingConfiguration) as missing:
        run(main)
    assert str(missing.value) == (
        f"{main}:5: missing required configuration shop:image for stack dev: "
        "set it with `stackwright config set image VALUE`"
    )
    assert missing.value.key == "shop:image"
    with pytest.raises(UsageError) as mistyped:
        run(main, replicas="three", image="nginx")
    assert str(mistyped.value) == (
        f"{helper}:4: configuration shop:replicas must be an integer (got 'three'); "
        "set it with `stackwright config set replicas 3`"
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("x = 1\ny = (\n", 2, "SyntaxError: '(' was never closed"),
        ("x = 1\n  y = 2\n", 2, "IndentationError: unexpected indent"),
    ],
)
def test_a_syntax_error_names_the_users_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    main = write(tmp_path / "main.py", text)
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{main}:{line}: the program failed: {message}"


def test_a_syntax_error_in_a_helper_module_names_the_helper(tmp_path: Path) -> None:
    helper = write(tmp_path / "components.py", "def make(:\n    pass\n")
    main = write(tmp_path / "main.py", "import components\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{helper}:1: the program failed: SyntaxError: invalid syntax"


def test_a_project_in_a_folder_called_stackwright(tmp_path: Path) -> None:
    # The old check dropped every frame whose file name contained "/stackwright/".
    main = write(tmp_path / "stackwright" / "main.py", "x = 1\nraise ValueError('bad value')\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"{main}:2: the program failed: ValueError: bad value"


def test_usage_errors_from_declarations_pass_through(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.py",
        """\
        import stackwright.kubernetes as k8s

        k8s.core.v1.ConfigMap("c")
        k8s.core.v1.ConfigMap("c")
        """,
    )
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == (
        f"{main}:4: duplicate resource URN urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::c: "
        f"{main}:3 declares it already; give one of them another name"
    )


def test_exit_zero_is_fine(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.py",
        """\
        import sys
        import stackwright.kubernetes as k8s

        k8s.core.v1.ConfigMap("c")
        sys.exit(0)
        k8s.core.v1.ConfigMap("never")
        """,
    )
    program = run_program(main, project="shop", stack="dev")
    assert [r.resource_name for r in program.resources] == ["c"]
    write(main, "raise SystemExit\n")
    assert run_program(main, project="shop", stack="dev").resources == []


def test_exit_with_a_status_is_a_usage_error(tmp_path: Path) -> None:
    main = write(tmp_path / "main.py", "import sys\nsys.exit(3)\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == f"the program {main} exited with status 3 before finishing"
    write(main, "import sys\nsys.exit('no cluster configured')\n")
    with pytest.raises(UsageError) as info:
        run(main)
    assert str(info.value) == (
        f"the program {main} exited saying 'no cluster configured' before finishing"
    )


def test_a_missing_program_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        run(tmp_path / "nope.py")
    assert str(info.value) == (
        f"program {tmp_path / 'nope.py'} does not exist: set `main` in Stackwright.yaml to the "
        "program's file"
    )
    with pytest.raises(UsageError, match=r"__main__\.py does not exist"):
        run(tmp_path)


def test_interrupts_are_not_turned_into_usage_errors(tmp_path: Path) -> None:
    main = write(tmp_path / "main.py", "raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        run(main)


def test_each_run_imports_the_programs_modules_afresh(tmp_path: Path) -> None:
    first = tmp_path / "first"
    second = tmp_path / "second"
    for folder, value in ((first, "one"), (second, "two")):
        write(folder / "settings.py", f"NAME = {value!r}\n")
        write(
            folder / "main.py",
            """\
            import settings
            import stackwright.kubernetes as k8s

            k8s.core.v1.ConfigMap(settings.NAME)
            """,
        )
    names = [
        run_program(folder / "main.py", project="shop", stack="dev").resources[0].resource_name
        for folder in (first, second, first)
    ]
    assert names == ["one", "two", "one"]
    assert "settings" not in sys.modules
