"""YAML programs (`runtime: yaml`), as Pulumi YAML: sections, references, functions,
options, and every mistake as one line with the file and line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from engine_stack import PROJECT, STACK, Stack
from engine_stack import stack as stack  # the fixture

from stackwright.engine import operations
from stackwright.engine.events import Diagnostic, StepStarted, Summary
from stackwright.engine.execute import Options
from stackwright.engine.program import run_program
from stackwright.engine.records import is_patch
from stackwright.errors import UsageError
from stackwright.kubernetes.groups import MODULES
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output, Secret, dependencies_of
from stackwright.sdk.resource import Alias, CustomTimeouts, Resource

WEB = """
name: shop
runtime: yaml
config:
  replicas:
    type: integer
    default: 2
  greeting: hello
  token:
    type: string
    secret: true
    default: s3cret
variables:
  # used before it is declared below: order comes from references
  image: ${registry}/web:${tag}
  registry: registry.example.com
  tag: "1.2"
  labels:
    app: web
resources:
  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      metadata:
        namespace: ${ns.metadata.name}
        annotations:
          greeting: ${greeting}-${stackwright.stack}
          literal: $${not-a-reference}
      spec:
        replicas: ${replicas}
        selector:
          matchLabels: ${labels}
        template:
          metadata:
            labels: ${labels}
          spec:
            containers:
              - name: web
                image: ${image}
                env:
                  - name: SETTINGS
                    value:
                      fn::toJSON: ${labels}
                  - name: TOKEN
                    value: ${token}
    options:
      protect: true
      ignoreChanges: [spec.replicas]
      customTimeouts:
        create: 5m
      aliases:
        - name: old-web
  ns:
    type: kubernetes:core/v1:Namespace
    properties:
      metadata:
        name: shop
  other:
    type: stackwright:providers:kubernetes
    properties:
      context: elsewhere
  widget:
    type: kubernetes:example.com/v1:Widget
    properties:
      spec:
        size: {fn::select: [1, [s, m, l]]}
        parts: {fn::split: [",", "a,b"]}
    options:
      provider: ${other}
      dependsOn:
        - ${web}
      import: shop/widget
outputs:
  ns: ${ns.metadata.name}
  joined: {fn::join: ["-", [a, "${greeting}", 3]]}
  encoded: {fn::toBase64: hi}
"""


def _write(tmp_path: Path, text: str) -> Path:
    """The program file of `text` (dedented) in `tmp_path`."""
    path = tmp_path / "Stackwright.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _run(
    tmp_path: Path,
    text: str,
    config: dict[str, Any] | None = None,
    secret_keys: frozenset[str] = frozenset(),
) -> Program:
    return run_program(
        _write(tmp_path, text),
        project=PROJECT,
        stack=STACK,
        config=config or {},
        secret_keys=secret_keys,
    )


def _line_of(text: str, at: str) -> int:
    """The line of the program file (as `_run` writes it) where `at` is."""
    written = textwrap.dedent(text).lstrip()
    return written[: written.index(at)].count("\n") + 1


def _refused(tmp_path: Path, text: str, old: str, new: str, at: str, said: str) -> None:
    """`text` with `old` replaced by `new` is refused in one line: the file, the line where
    `at` is, and `said`."""
    assert old in text
    edited = text.replace(old, new, 1)
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, edited)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(edited, at)}: "), message
    assert said in message, message


def _by_name(program: Program) -> dict[str, Resource]:
    return {r.resource_name: r for r in program.resources}


def test_a_yaml_program_declares_its_resources_with_options_and_outputs(tmp_path: Path) -> None:
    program = _run(tmp_path, WEB, {"shop:replicas": 4})
    found = _by_name(program)
    assert list(found) == ["ns", "web", "other", "widget"]  # by their references, not the file
    web = found["web"]
    assert web.resource_type == "kubernetes:apps/v1:Deployment"
    assert str(web.declared_at) == f"{tmp_path / 'Stackwright.yaml'}:{_line_of(WEB, '  web:')}"
    spec = web.props["spec"]
    assert spec["replicas"] == 4 and spec["selector"] == {"matchLabels": {"app": "web"}}
    container = spec["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/web:1.2"
    assert container["env"][0]["value"] == '{"app":"web"}'
    token = container["env"][1]["value"]
    assert isinstance(token, Output) and token.is_secret
    annotations = web.props["metadata"]["annotations"]
    assert annotations == {"greeting": "hello-dev", "literal": "${not-a-reference}"}
    namespace = web.props["metadata"]["namespace"]
    assert isinstance(namespace, Output) and dependencies_of(namespace) == {found["ns"]}
    opts = web.opts
    assert opts.protect and list(opts.ignore_changes) == ["spec.replicas"]
    assert opts.custom_timeouts == CustomTimeouts(create=300.0)  # "5m"
    assert list(opts.aliases) == [Alias(name="old-web")]

    widget = found["widget"]
    assert widget.props["apiVersion"] == "example.com/v1" and widget.props["kind"] == "Widget"
    assert widget.props["spec"] == {"size": "m", "parts": ["a", "b"]}
    assert widget.opts.provider is found["other"] and list(widget.opts.depends_on) == [web]
    assert widget.opts.import_ == "shop/widget"
    assert found["other"].resource_type == PROVIDER_TYPE

    assert program.exports["joined"] == "a-hello-3"
    assert program.exports["encoded"] == "aGk="
    assert isinstance(program.exports["ns"], Output)


def test_config_takes_the_stack_value_typed_or_the_default_and_keeps_secrets_secret(
    tmp_path: Path,
) -> None:
    text = """
    name: shop
    runtime: yaml
    config:
      replicas: {type: integer, default: 2}
      debug: {type: boolean}
      password: {type: string}
    outputs:
      replicas: ${replicas}
      debug: ${debug}
      password: ${password}
    """
    program = Program(project=PROJECT, stack=STACK)
    del program
    path = _write(tmp_path, text)
    declared = run_program(
        path,
        project=PROJECT,
        stack=STACK,
        config={"shop:debug": "true", "shop:password": "pw"},
        secret_keys=frozenset({"shop:password"}),
    )
    assert declared.exports["replicas"] == 2 and declared.exports["debug"] is True
    password = declared.exports["password"]
    assert isinstance(password, Output) and password.is_secret
    assert isinstance(password.resolve(lambda r: None), Secret)


@pytest.mark.parametrize(
    ("old", "new", "at", "said"),
    [
        (
            "${ns.metadata.name}",
            "${nss.metadata.name}",
            "${nss",
            "${nss.metadata.name}: nothing is named 'nss'; did you mean 'ns'?",
        ),
        (
            "kubernetes:apps/v1:Deployment",
            "kubernetes:apps/v1:Deploymnt",
            "  web:",
            "resource web: apps/v1 has no kind 'Deploymnt'; did you mean 'Deployment'?",
        ),
        (
            "      metadata:\n        namespace",
            "      metdata:\n        namespace",
            "  web:",
            "resource web: Deployment has no field 'metdata'; did you mean 'metadata'? "
            "its fields: metadata, spec",
        ),
        (  # at the option's own line, not the resource's
            "protect: true",
            "protec: true",
            "protec: true",
            "resource web: unknown option 'protec'; did you mean 'protect'?",
        ),
        (
            "fn::toJSON",
            "fn::toJSN",
            "fn::toJSN",
            "unknown function fn::toJSN; did you mean fn::toJSON?",
        ),
        (  # the second key was dropped without a word (Pulumi YAML refuses it)
            "fn::toJSON: ${labels}",
            "fn::toJSON: ${labels}\n                      fn::secret: x",
            "fn::toJSON",
            "fn::toJSON must be the only key of its mapping, which also has fn::secret: give "
            "each call a mapping of its own",
        ),
        (
            "        - ${web}",
            "        - ${web}\n        - ${image}",
            "      dependsOn:",
            "resource widget: option dependsOn must list resources",
        ),
        ("type: integer", "type: int", "  replicas:", "config replicas: type 'int' is not one of"),
        (
            # Ignored, it left the token's value unmarked: a secret in plain text.
            "    secret: true",
            "    secrte: true",
            "  token:",
            "config token: unknown key 'secrte'; did you mean 'secret'? a config entry has "
            "default, description, items, secret, type",
        ),
        (
            "resources:",
            "resourcs:",
            "resourcs:",
            "unknown section 'resourcs'; did you mean 'resources'? a YAML program has",
        ),
        (
            "  ns:\n",
            "  ns:\n    gett: {}\n",
            "  ns:",
            "resource ns: unknown key 'gett'; did you mean 'get'? a resource has type, "
            "properties, options, get",
        ),
        (
            "  ns:\n",
            "  ns:\n    get: {id: shop}\n",
            "  ns:",
            "resource ns: `get:` reads an existing object, which declares no `properties:`",
        ),
        (
            "  other:\n    type: stackwright:providers:kubernetes\n    properties:\n"
            "      context: elsewhere\n",
            "  other:\n    type: stackwright:providers:kubernetes\n    get: {id: x}\n",
            "  other:",
            "resource other: `get:` reads Kubernetes objects only, not stackwright:providers",
        ),
        (  # one level too far out: it said only what a resource has
            "    type: kubernetes:core/v1:Namespace\n    properties:\n      metadata:\n"
            "        name: shop\n",
            "    type: kubernetes:core/v1:Namespace\n    metadata:\n      name: shop\n",
            "  ns:",
            "resource ns: unknown key 'metadata'; metadata is a field of the object: indent it "
            "under `properties:`; a resource has type, properties, options, get",
        ),
        ("  registry: reg", "  image: reg", "  image: reg", "'image' is given twice"),
        ("  registry: reg", "  ns: reg", "  ns:\n", "the name 'ns' is declared twice (first on"),
        (
            "        size: {fn::select",
            "        size: !!python/name:os.system {fn::select",
            "        size:",
            "tag python/name:os.system is not supported: YAML programs are plain data",
        ),
        (
            "        name: shop",
            "        name: ${widget.metadata.name}",
            "  web:",
            "web → ns → widget → web refer to each other",
        ),
        ("        size:", "       size:", "        parts:", "not valid YAML (column 9): "),
        # PyYAML's reader names no line, only the character's place in the stream.
        (
            "app: web",
            'app: "w\x07b"',
            "app: ",
            "not valid YAML (column 12): unacceptable character #x0007: ",
        ),
        # PyYAML's words alone left the reader to find the slip (Pulumi YAML habits both).
        (
            "        parts:",
            "\tparts:",
            "\tparts:",
            "not valid YAML (column 1): found character that cannot start any token (while "
            "scanning for the next token from line 66, column 1): YAML is indented with spaces, "
            "not tabs: replace the tab with spaces",
        ),
        (
            "      dependsOn:\n        - ${web}",
            "      dependsOn: [${web}]",
            "      dependsOn: [",
            "a ${…} reference inside {…} or […] is read as YAML's own braces; quote it, as "
            "'${web}'",
        ),
        # Function arguments that do not fit: in words, not Python's IndexError / OSError.
        (
            "{fn::select: [1, [s, m, l]]}",
            "{fn::select: [3, [s, m, l]]}",
            "        size:",
            "fn::select: index 3 is out of range: the list has 3 value(s)",
        ),
        (
            "{fn::select: [1, [s, m, l]]}",
            "{fn::select: [one, [s, m, l]]}",
            "        size:",
            "fn::select: the index 'one' is not a whole number",
        ),
        (
            "{fn::select: [1, [s, m, l]]}",
            "{fn::readFile: ./missing.txt}",
            "        size:",
            "fn::readFile: cannot read {tmp}/missing.txt: no such file; the path is relative "
            "to the program's folder",
        ),
        (  # its value is never shown (s3cret)
            "{fn::select: [1, [s, m, l]]}",
            '{fn::readFile: "${token}"}',
            "        size:",
            "fn::readFile: the path is secret (it comes from ${token}): a path must be plain "
            "text known when the program runs: give it as plain configuration (and the file's "
            "text as {fn::secret: {fn::readFile: PATH}} to keep that secret)",
        ),
        (  # a literal made secret is not shown either; the call as written, not Python's
            "{fn::select: [1, [s, m, l]]}",
            "{fn::readFile: {fn::secret: ./hunter2.txt}}",
            "        size:",
            "fn::readFile: the path is secret (it comes from {fn::secret: …}): a path must be "
            "plain text known when the program runs: give it as plain configuration (and the "
            "file's text as {fn::secret: {fn::readFile: PATH}} to keep that secret)",
        ),
        (
            "{fn::select: [1, [s, m, l]]}",
            '{fn::readFile: {fn::join: ["/", [etc, "${token}"]]}}',
            "        size:",
            "fn::readFile: the path is secret (it comes from {fn::join: [/, [etc, ${token}]]}): "
            "a path must be plain text known when the program runs: give it as plain "
            "configuration (and the file's text as {fn::secret: {fn::readFile: PATH}} to keep "
            "that secret)",
        ),
        (
            "{fn::select: [1, [s, m, l]]}",
            '{fn::readFile: "${ns.metadata.name}"}',
            "        size:",
            "fn::readFile: the path comes from another resource's output (${ns.metadata.name}), "
            "known only once it is applied: a path must be plain text known when the program "
            "runs (a literal, configuration or variable)",
        ),
        (  # it was sent as the text `${image` for the API server to refuse
            "image: ${image}",
            'image: "nginx:${image"',
            'image: "nginx',
            "'${image': a `${` that no `}` closes; close the reference, or write `$${` for "
            "a literal `${`",
        ),
    ],
)
def test_a_mistake_is_one_line_naming_the_file_and_line(
    tmp_path: Path, old: str, new: str, at: str, said: str
) -> None:
    _refused(tmp_path, WEB, old, new, at, said.replace("{tmp}", str(tmp_path)))


@pytest.mark.parametrize(
    ("old", "new", "at", "said"),
    [
        (
            "create: 5m",
            "creat: 5m",
            "      customTimeouts:",
            "resource web: option customTimeouts takes create, update and delete (e.g. 5m)",
        ),
        ("protect: true", "protect: maybe", "protect: maybe", "option protect must be true"),
        (
            "- name: old-web",
            "- nom: old-web",
            "      aliases:",
            "resource web: option aliases: an alias is a URN or a mapping of name, type",
        ),
        (
            "- name: old-web",
            '- {name: old-web, noParent: "false"}',
            "      aliases:",
            "resource web: option aliases: an alias's noParent must be true or false",
        ),
        (
            "provider: ${other}",
            "provider: other",
            "provider: other",
            "resource widget: option provider must be a resource: ${name}",
        ),
        (
            "import: shop/widget",
            "import: [shop/widget]",
            "import: [",
            "resource widget: option import must be the object's NAME or NAMESPACE/NAME",
        ),
    ],
)
def test_the_loaders_check_of_an_option_points_at_its_line(
    tmp_path: Path, old: str, new: str, at: str, said: str
) -> None:
    """The loader's own option errors name the option's line, as the SDK's do."""
    _refused(tmp_path, WEB, old, new, at, said)


@pytest.mark.parametrize(
    ("new", "at", "said"),
    [
        (
            "customTimeouts:\n        create: soon",
            "create: soon",
            "customTimeouts.create of {resource} must be a positive number of seconds",
        ),
        (
            "ignoreChanges: [spec..replicas]",
            "ignoreChanges:",
            "ignoreChanges of {resource}: ",
        ),
        (
            "replaceOnChanges: [spec..replicas]",
            "replaceOnChanges:",
            "replaceOnChanges of {resource}: ",
        ),
        ("aliases: [not-a-urn]", "aliases:", "aliases of {resource}: "),
        (
            "aliases: [{type: 7}]",
            "aliases:",
            "aliases of {resource}: an alias's type must be a string (got int)",
        ),
        (
            "aliases: [{parent: not-a-urn}]",
            "aliases:",
            "the alias parent of {resource}: ",
        ),
        (
            "additionalSecretOutputs: [spec.template]",
            "additionalSecretOutputs:",
            "additionalSecretOutputs of {resource} must name top-level fields",
        ),
    ],
)
def test_the_sdks_check_of_an_option_names_it_as_yaml_does_at_its_line(
    tmp_path: Path, new: str, at: str, said: str
) -> None:
    """An option the loader takes but the SDK refuses is told in the program's spelling
    (customTimeouts, not custom_timeouts), at the line the option is written on."""
    given = "ignoreChanges: [spec.replicas]\n      customTimeouts:\n        create: 5m\n"
    edited = WEB.replace(given + "      aliases:\n        - name: old-web", new, 1)
    assert edited != WEB
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, edited)
    message = str(caught.value)
    where = f"{tmp_path / 'Stackwright.yaml'}:{_line_of(edited, at)}"
    resource = "kubernetes:apps/v1:Deployment 'web'"
    assert "\n" not in message, message
    assert message.startswith(f"{where}: {said.format(resource=resource)}"), message


def test_a_missing_config_without_a_default_says_how_to_set_it(tmp_path: Path) -> None:
    text = """
    name: shop
    runtime: yaml
    config:
      domain: {type: string}
    """
    with pytest.raises(
        UsageError,
        match=r"Stackwright.yaml:4: missing required configuration "
        r"shop:domain for stack dev: set it with `stackwright config set domain",
    ):
        _run(tmp_path, text)


def test_a_config_declared_secret_but_held_in_plain_text_is_refused_at_its_entry(
    tmp_path: Path,
) -> None:
    # Pulumi refuses it too ("… must be encrypted as it's secret"): the program kept the
    # value secret while the stack file, which may be committed, held it in plain text.
    text = """
    name: shop
    runtime: yaml
    config:
      token: {type: string, secret: true}
    outputs:
      token: ${token}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text, {"shop:token": "hunter2222"})
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:4: config token is declared")
    assert "stackwright config set --secret token VALUE" in message
    assert "hunter2222" not in message
    encrypted = _run(tmp_path, text, {"shop:token": "hunter2222"}, frozenset({"shop:token"}))
    assert encrypted.exports["token"].is_secret


def test_a_yaml_program_goes_through_the_engine_with_references_resolved(
    tmp_path: Path, stack: Stack
) -> None:
    path = _write(
        tmp_path,
        """
            name: shop
            runtime: yaml
            resources:
              settings:
                type: kubernetes:core/v1:ConfigMap
                properties:
                  data: {mode: fast}
              reader:
                type: kubernetes:core/v1:ConfigMap
                properties:
                  data:
                    from: ${settings.metadata.name}
                    mode: mode-${settings.data.mode}
            outputs:
              name: ${reader.metadata.name}
        """,
    )
    from stackwright.engine.yaml_program import run_yaml_program

    summary = stack.up(lambda p: run_yaml_program(path))
    assert summary.ok, summary.failures
    reader = next(r for r in stack.state().resources if r.urn.endswith("::reader"))
    settings = next(r for r in stack.state().resources if r.urn.endswith("::settings"))
    assert reader.inputs["data"] == {
        "from": settings.inputs["metadata"]["name"],
        "mode": "mode-fast",
    }
    assert settings.urn in reader.dependencies
    assert summary.outputs["name"] == reader.inputs["metadata"]["name"]


def test_a_function_of_a_secret_known_now_is_computed_now_and_refused_at_its_line(
    tmp_path: Path,
) -> None:
    # It was put off to the run (a secret is an Output), where it failed as "an apply
    # callback failed at …/json/decoder.py:355: JSONDecodeError", exit 1.
    text = """
    name: shop
    runtime: yaml
    config:
      settings: {type: string, secret: true}
    outputs:
      parsed: {fn::fromJSON: "${settings}"}
    """
    secret = frozenset({"shop:settings"})
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text, {"shop:settings": "not json"}, secret)
    assert str(caught.value) == (
        f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'parsed:')}: fn::fromJSON: Expecting "
        "value: line 1 column 1 (char 0)"
    )
    parsed = _run(tmp_path, text, {"shop:settings": '{"a": 1}'}, secret).exports["parsed"]
    assert isinstance(parsed, Output) and parsed.is_secret


def test_a_function_of_a_resources_output_that_does_not_fit_names_its_line(
    tmp_path: Path, stack: Stack
) -> None:
    # Known only in the run: it failed as "an apply callback failed at
    # …/json/decoder.py:355: JSONDecodeError", naming no line of the program.
    text = """
    name: shop
    runtime: yaml
    resources:
      settings:
        type: kubernetes:core/v1:ConfigMap
        properties:
          data: {mode: fast}
    outputs:
      parsed: {fn::fromJSON: "${settings.data.mode}"}
    """
    path = _write(tmp_path, text)
    from stackwright.engine.yaml_program import run_yaml_program

    summary = stack.up(lambda p: run_yaml_program(path))
    assert summary.failures == [
        f"stack output parsed: {path}:{_line_of(text, 'parsed:')}: fn::fromJSON: Expecting "
        "value: line 1 column 1 (char 0)"
    ]


def test_to_json_of_a_whole_map_of_an_object_not_made_yet_previews_unknown(
    tmp_path: Path, stack: Stack
) -> None:
    # It printed the map as the program gave it, as if known, where the cluster may add to
    # it (Output.json_dumps already said unknown); a field the program gives stays known.
    text = """
    name: shop
    runtime: yaml
    resources:
      settings:
        type: kubernetes:core/v1:ConfigMap
        properties:
          data: {mode: fast}
    outputs:
      whole: {fn::toJSON: "${settings.data}"}
      mode: {fn::toJSON: "${settings.data.mode}"}
    """
    path = _write(tmp_path, text)
    from stackwright.engine.yaml_program import run_yaml_program

    previewed = stack.preview(lambda p: run_yaml_program(path))
    assert previewed.outputs == {"whole": "(known after apply)", "mode": '"fast"'}
    assert stack.up(lambda p: run_yaml_program(path)).outputs == {
        "whole": '{"mode":"fast"}',
        "mode": '"fast"',
    }


def test_the_readmes_yaml_program_declares_what_it_says(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## YAML programs", 1)[1]
    text = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    program = _run(tmp_path, text)
    (web,) = program.resources
    spec = web.props["spec"]
    assert spec["replicas"] == 2 and spec["selector"] == {"matchLabels": {"app": "web"}}
    env = spec["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "SETTINGS", "value": '{"app":"web"}'}]
    assert web.opts.protect and list(web.opts.ignore_changes) == ["spec.replicas"]
    assert isinstance(program.exports["name"], Output)


def test_manifests_and_charts_are_declared_from_paths_relative_to_the_program(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\ndata: {a: '1'}\n"
    )
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [app.yaml]\n")
    (tmp_path / "base" / "app.yaml").write_text((tmp_path / "app.yaml").read_text())
    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
    text = f"""
    name: shop
    runtime: yaml
    resources:
      manifests:
        type: kubernetes:yaml/v2:ConfigFile
        properties:
          file: app.yaml
      chart:
        type: kubernetes:helm.sh/v4:Chart
        properties:
          chart: {chart}
          namespace: apps
          values:
            image: {{tag: "1.0"}}
      base:
        type: kubernetes:kustomize/v2:Directory
        properties:
          directory: base
          namespace: staging
    """
    program = _run(tmp_path, text)
    types = [r.resource_type for r in program.resources]
    placed = [r for r in program.resources if r.resource_name == "ConfigMap:staging/from-file"]
    assert [r.props["metadata"]["namespace"] for r in placed] == ["staging"]
    assert types[0] == "kubernetes:yaml/v2:ConfigFile" and "kubernetes:helm.sh/v4:Chart" in types
    from_file = next(r for r in program.resources if r.props.get("data") == {"a": "1"})
    assert from_file.props["metadata"]["name"] == "from-file"
    assert sum(t == "kubernetes:helm.sh/v4:Chart" for t in types) == 1 and len(types) > 3


def test_imported_secret_values_are_read_from_configuration_not_printed(tmp_path: Path) -> None:
    from stackwright.automation.stack import yaml_code

    inputs = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds"},
        "data": {"password": "aHVudGVyMg=="},
    }
    code = yaml_code("kubernetes:core/v1:Secret", "creds", inputs, ("data",))
    assert "aHVudGVyMg==" not in code and "hunter2" not in code
    assert "#   stackwright config set --secret creds-password -- <plain value>" in code
    entry = yaml.safe_load(code)
    assert entry == {
        "creds": {
            "type": "kubernetes:core/v1:Secret",
            "properties": {
                "metadata": {"name": "creds"},
                "stringData": {"password": "${creds-password}"},
            },
        }
    }
    program = (
        "name: shop\nruntime: yaml\nconfig:\n  creds-password: {type: string, secret: true}\n"
        "resources:\n" + textwrap.indent(code, "  ") + "\n"
    )
    declared = _run(
        tmp_path,
        program,
        {"shop:creds-password": "hunter2"},
        frozenset({"shop:creds-password"}),  # set with --secret, as the comment says
    )
    (secret,) = declared.resources
    assert secret.props["stringData"]["password"].is_secret


def test_another_stacks_outputs_are_read_through_a_stack_reference(tmp_path: Path) -> None:
    from stackwright.model import SecretValue

    text = """
    name: app
    runtime: yaml
    resources:
      platform:
        type: pulumi:pulumi:StackReference
        properties:
          name: platform/prod
      settings:
        type: kubernetes:core/v1:ConfigMap
        properties:
          metadata: {namespace: "${platform.outputs.namespace}"}
          data: {token: "${platform.outputs.token}"}
    """
    path = _write(tmp_path, text)
    asked: list[str] = []

    def read_stack(name: str) -> dict[str, Any]:
        asked.append(name)
        return {"namespace": "apps", "token": SecretValue("t0ken")}

    declared = run_program(path, project="app", stack=STACK, read_stack=read_stack)
    (settings,) = declared.resources
    assert asked == ["platform/prod"]
    namespace = settings.props["metadata"]["namespace"]
    assert namespace.resolve(lambda r: None) == "apps"
    assert settings.props["data"]["token"].is_secret

    path.write_text(textwrap.dedent(text).lstrip().replace("outputs.token", "outputs.nope"))
    with pytest.raises(UsageError) as missing:
        run_program(path, project="app", stack=STACK, read_stack=read_stack)
    # The line that reads the output, not a frame of whatever ran the program.
    assert str(missing.value).startswith(
        f"{path}:{_line_of(text, 'data: {token')}: stack reference 'platform/prod' has no "
        "output 'nope' (its outputs: namespace, token)"
    )
    path.write_text(textwrap.dedent(text).lstrip().replace("outputs.token", "token"))
    with pytest.raises(UsageError, match=r"Stackwright.yaml:\d+: .*platform.outputs.NAME"):
        run_program(path, project="app", stack=STACK, read_stack=read_stack)


READ = """
name: shop
runtime: yaml
config:
  dnsNamespace: kube-system
resources:
  dns:
    type: kubernetes:core/v1:Service
    get:
      id: ${dnsNamespace}/kube-dns
  resolver:
    type: kubernetes:core/v1:ConfigMap
    properties:
      metadata: {name: resolver}
      data:
        ip: ${dns.spec.clusterIP}
outputs:
  dnsIp: ${dns.spec.clusterIP}
"""


def test_get_reads_an_existing_object_as_pulumi_yaml_does(tmp_path: Path, stack: Stack) -> None:
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kube-dns", "namespace": "kube-system"},
            "spec": {"clusterIP": "10.96.0.10"},
        },
        manager="kube-addon-manager",
    )
    path = _write(tmp_path, READ)
    from stackwright.engine.yaml_program import run_yaml_program

    summary = stack.up(lambda p: run_yaml_program(path))

    assert summary.ok, summary.failures
    assert summary.counts == {"read": 1, "create": 1}
    assert summary.outputs == {"dnsIp": "10.96.0.10"}
    dns = next(r for r in stack.state().resources if r.urn.endswith("::dns"))
    assert dns.external and dns.id == "kube-system/kube-dns"
    assert [c.method for c in stack.fake.calls if c.name == "kube-dns"] == ["read"]


@pytest.mark.parametrize(
    ("get", "said", "at"),
    [
        (
            "get: {name: kube-dns}",
            "`get:` takes the object's id: get: {id: NAMESPACE/NAME}",
            "  dns:",
        ),
        ("get: kube-dns", "`get:` takes the object's id", "  dns:"),
        (
            'get: {id: "${made.metadata.name}"}\n'
            "  made:\n    type: kubernetes:core/v1:ConfigMap\n    properties: {data: {a: b}}",
            "id must be a plain NAME or NAMESPACE/NAME",
            "  dns:",
        ),
        (
            "get: {id: a/b/c}",
            "{file}:{line}: get.id of kubernetes:core/v1:Service 'dns' must be the object's "
            "NAME or NAMESPACE/NAME",
            "get: {id: a/b/c}",
        ),
        (
            "get: {id: a/b}\n    options: {protect: true}",
            "{file}:{line}: kubernetes:core/v1:Service 'dns' is read (get: {id: a/b}), so "
            "protect does not apply to it",
            "options: {protect",
        ),
    ],
)
def test_a_mistaken_get_is_one_line_naming_the_file_and_line(
    tmp_path: Path, get: str, said: str, at: str
) -> None:
    edited = READ.replace("get:\n      id: ${dnsNamespace}/kube-dns", get)
    assert edited != READ
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, edited)
    message = str(caught.value)
    file, line = tmp_path / "Stackwright.yaml", _line_of(edited, at)
    assert (
        "\n" not in message
        and said.replace("{file}", str(file)).replace("{line}", str(line)) in message
    ), message
    assert f"{file}:{line}" in message, message


def test_a_resources_id_and_urn_are_read_as_pulumi_yaml_reads_them(
    tmp_path: Path, stack: Stack
) -> None:
    # `${res.id}` is the first output Pulumi YAML's documentation shows; it was null.
    path = _write(
        tmp_path,
        """
            name: shop
            runtime: yaml
            resources:
              ns:
                type: kubernetes:core/v1:Namespace
                properties:
                  metadata: {name: shop}
              settings:
                type: kubernetes:core/v1:ConfigMap
                properties:
                  metadata: {name: settings, namespace: "${ns.metadata.name}"}
                  data: {owner: "${ns.id}"}
            outputs:
              id: ${settings.id}
              urn: ${settings.urn}
              text: "id=${settings.id}"
        """,
    )
    from stackwright.engine.yaml_program import run_yaml_program

    summary = stack.up(lambda p: run_yaml_program(path))
    assert summary.ok, summary.failures
    settings = next(r for r in stack.state().resources if r.urn.endswith("::settings"))
    assert summary.outputs == {
        "id": "shop/settings",
        "urn": settings.urn,
        "text": "id=shop/settings",
    }
    assert settings.inputs["data"] == {"owner": "shop"}


@pytest.mark.parametrize(
    ("kind", "given", "expected"),
    [
        ("String", "abc", "abc"),
        ("Number", "1.5", 1.5),
        ("Boolean", "true", True),
        ("List<String>", '["a", "b"]', ["a", "b"]),
        ("List<Number>", "[1, 2]", [1, 2]),
        ("Integer", "3", 3),
    ],
)
def test_config_types_are_taken_as_pulumi_yaml_spells_them(
    tmp_path: Path, kind: str, given: str, expected: Any
) -> None:
    # Pulumi YAML's reference gives the types as String, Number, List<Number>, List<String>.
    text = f"""
    name: shop
    runtime: yaml
    config:
      value: {{type: "{kind}"}}
    outputs:
      value: ${{value}}
    """
    declared = _run(tmp_path, text, {"shop:value": given})
    assert declared.exports["value"] == expected


def test_a_config_declared_with_its_namespace_is_read_by_that_key_with_its_default(
    tmp_path: Path,
) -> None:
    # `shop:greeting` declared with a default read null (its default skipped), and a value
    # set for it was looked for under `shop:shop:greeting`.
    text = """
    name: shop
    runtime: yaml
    config:
      shop:greeting: {type: string, default: hi}
      other:size: {type: integer, default: 1}
    outputs:
      greeting: ${shop:greeting}
      size: ${other:size}
    """
    assert _run(tmp_path, text).exports == {"greeting": "hi", "size": 1}
    given = _run(tmp_path, text, {"shop:greeting": "yo", "other:size": "3"})
    assert given.exports == {"greeting": "yo", "size": 3}


def test_main_naming_a_folder_runs_the_main_yaml_in_it_as_pulumi_yaml_does(tmp_path: Path) -> None:
    from stackwright.automation.workspace import Project

    (tmp_path / "Stackwright.yaml").write_text("name: shop\nruntime: yaml\nmain: app/\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Main.yaml").write_text(
        "resources:\n  cm:\n    type: kubernetes:core/v1:ConfigMap\n"
        "    properties: {data: {a: b}}\n"
    )
    project = Project.load(tmp_path)
    assert project.main == tmp_path / "app" / "Main.yaml"
    declared = run_program(project.main, project="shop", stack=STACK)
    assert [r.resource_name for r in declared.resources] == ["cm"]


#: A program whose references into built-in kinds' live objects (and a CRD kind's) are all
#: fields there, absent ones too; a case adds the output `bad:`.
REFERENCES = """
name: shop
runtime: yaml
resources:
  cm:
    type: kubernetes:core/v1:ConfigMap
    properties: {data: {a: b}}
  svc:
    type: kubernetes:core/v1:Service
    properties: {spec: {ports: [{port: 80}]}}
  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      spec:
        replicas: 1
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
              - name: web
                image: nginx
                env:
                  - {name: IP, value: "${svc.spec.clusterIP}"}
  widget:
    type: kubernetes:example.com/v1:Widget
    properties: {spec: {size: 1}}
  revision:
    type: kubernetes:apps/v1:ControllerRevision
    properties: {revision: 1, data: {spec: {any: thing}}}
variables:
  ready: ${web.status.readyReplicas}
outputs:
  kind: ${cm.kind}
  label: ${cm.metadata.labels.anything}
  bracketed: ${cm.metadata.labels["app.kubernetes.io/name"]}
  data: ${cm.data.anything}
  port: ${svc.spec.ports[0].nodePort}
  selector: ${svc.spec.selector.anything}
  ip: ${svc.status.loadBalancer.ingress[0].ip}
  limits: ${web.spec.template.spec.containers[0].resources.limits.cpu}
  conditions: ${web.status.conditions[0].reason}
  widget: ${widget.spec.anything.at.all}
  widgetStatus: ${widget.status.whatever}
  newer: ${svc.status["brandNewThing"]}
  open: ${revision.data.spec.any}
  annotation: ${web.spec.template.metadata.annotations.anything}
  finalizer: ${cm.metadata.finalizers[0]}
  argument: ${web.spec.template.spec.containers[0].args[1]}
"""


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("${cm.metdata.name}", "ConfigMap has no field metdata (did you mean metadata"),
        ("${cm.spec}", "ConfigMap has no field spec (ConfigMap's fields: apiVersion, "),
        ("${cm.status}", "ConfigMap has no field status"),
        ("x-${cm.dta.a}", "ConfigMap has no field dta (did you mean data?)"),
        ("${cm.metadata.nmae}", "ConfigMap has no field metadata.nmae (did you mean name"),
        ("${svc.spec.ports[0].nodPort}", "no field spec.ports[0].nodPort (did you mean nodePort"),
        ("${svc.spec.clusterIp}", "Service has no field spec.clusterIp (did you mean clusterIP"),
        ("${svc.spec.clusterIPP}", "Service has no field spec.clusterIPP (did you mean clusterIP"),
        # Pulumi's Python spelling is not Kubernetes': the live object has no such key.
        ("${svc.spec.cluster_ip}", "Service has no field spec.cluster_ip (did you mean clusterIP"),
        (
            "${svc.status.loadBalncer.ingress[0].ip}",
            "output bad: ${svc.status.loadBalncer.ingress[0].ip}: Service has no field "
            "status.loadBalncer (did you mean loadBalancer?)",
        ),
        ("${svc.status.loadBalancer.ingress[0].ipp}", "status.loadBalancer.ingress[0].ipp (did"),
        (
            "${svc.status.loadBalancer.ingress.ip}",
            "status.loadBalancer.ingress is a list of LoadBalancerIngress: take an item, "
            "status.loadBalancer.ingress[0].ip",
        ),
        ("${web.spec.replica}", "Deployment has no field spec.replica (did you mean replicas?)"),
        # Below a scalar: it read null, as an absent field does.
        (
            "${web.spec.replicas.foo}",
            "Deployment has no field spec.replicas.foo (spec.replicas is an integer, which has "
            "no fields: read spec.replicas itself)",
        ),
        ("${web.spec.replicas[0]}", "no item spec.replicas[0] (spec.replicas is an integer"),
        ("x-${svc.spec.clusterIP.a}", "no field spec.clusterIP.a (spec.clusterIP is a string"),
        ("${cm.metadata.name.first}", "no field metadata.name.first (metadata.name is a string"),
        ("${revision.revision.x}", "ControllerRevision has no field revision.x (revision is an"),
        (
            "${svc.status.loadBalancer.ingress[0].ip.v4}",
            "status.loadBalancer.ingress[0].ip is a string, which has no fields",
        ),
        ("${web.status.readyReplicas.x}", "(status.readyReplicas is an integer, which has no"),
        # A name on a list of scalars: it read null, as a free value's key did.
        (
            "${cm.metadata.finalizers.foo}",
            "ConfigMap has no field metadata.finalizers.foo (metadata.finalizers is a list of "
            "strings, which has no fields: read metadata.finalizers itself or an item, "
            "metadata.finalizers[0])",
        ),
        ("${cm.metadata.finalizers[0].foo}", "(metadata.finalizers[0] is a string, which has no"),
        # A field newer than the kinds' definitions is read in brackets, as in Python.
        (
            "${svc.status.brandNewThing}",
            "ServiceStatus's fields: conditions, loadBalancer; a field newer than Stackwright's "
            'definitions of the kinds is read by its key: ["brandNewThing"])',
        ),
        ("${web.status.readyReplica}", "no field status.readyReplica (did you mean readyReplicas"),
    ],
)
def test_a_misspelt_field_of_a_built_in_kind_in_a_reference_is_one_line(
    tmp_path: Path, reference: str, said: str
) -> None:
    # It read null, silently, as a field the server had not filled in would: no name under
    # `status` was checked, nor `status` itself (a ConfigMap has none).
    assert _run(tmp_path, REFERENCES).exports.keys() >= {"ip", "widgetStatus"}
    text = REFERENCES + f'  bad: "{reference}"\n'
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'bad:')}: ")
    assert f": output bad: ${reference.partition('$')[2]}: " in message, message
    assert said in message and "\n" not in message, message


def test_a_key_in_brackets_below_a_scalar_is_refused(tmp_path: Path) -> None:
    # As Python's `web.spec.replicas["x"]` is: a bracket is not checked as a name is, but
    # nothing is below an integer.
    text = REFERENCES + '  bad: ${web.spec.replicas["x"]}\n'
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    assert str(caught.value).endswith(
        ': output bad: ${web.spec.replicas["x"]}: Deployment has no item spec.replicas.x '
        "(spec.replicas is an integer, which has no items: read spec.replicas itself)"
    )


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            "${svc.spec.clusterIP}",
            "${svc.spec.clusterIPP}",
            "resource web: ${svc.spec.clusterIPP}: Service has no field spec.clusterIPP (did "
            "you mean clusterIP or clusterIPs?)",
        ),
        (
            "${web.status.readyReplicas}",
            "${web.status.readyReplica}",
            "variable ready: ${web.status.readyReplica}: Deployment has no field "
            "status.readyReplica (did you mean readyReplicas",
        ),
    ],
)
def test_a_misspelt_field_in_a_resources_or_variables_reference_names_its_entry(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    _refused(tmp_path, REFERENCES, old, new, new, said)


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("${labels.nope}", "${labels.nope}: labels has no key 'nope' (its keys: app, tier)"),
        ("${labels.tier.x}", "${labels.tier.x}: labels.tier is a string, not a mapping or list"),
        ("${ports[2]}", "${ports[2]}: ports has no item 2 (it has 2)"),
        ("${labels[0]}", "${labels[0]}: labels is a mapping: write labels.KEY"),
    ],
)
def test_a_key_a_known_value_does_not_have_is_one_line(
    tmp_path: Path, reference: str, said: str
) -> None:
    # It read null, silently; Pulumi YAML says the property does not exist.
    text = f"""
    name: shop
    runtime: yaml
    variables:
      labels: {{app: web, tier: front}}
      ports: [80, 443]
    outputs:
      fine: "${{labels.app}}-${{ports[1]}}"
      bad: "{reference}"
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'bad:')}: ")
    assert said in message and "\n" not in message


@pytest.mark.parametrize(
    ("kind", "default"),
    [
        ("integer", "abc"),
        ("integer", "true"),
        ("Number", '"1.5"'),
        ("boolean", "yes please"),
        ("string", "[a]"),
        ("List<String>", "a"),
        ("object", "[a]"),
    ],
)
def test_a_default_not_of_its_configs_type_is_one_line(
    tmp_path: Path, kind: str, default: str
) -> None:
    # It was handed out as it was, whatever the type said.
    text = f"""
    name: shop
    runtime: yaml
    config:
      value:
        type: {kind}
        default: {default}
    outputs:
      value: ${{value}}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'value:')}: ")
    assert "config value: default " in message and f"is not of type {kind}" in message
    assert "\n" not in message


def test_a_default_of_its_configs_type_is_taken(tmp_path: Path) -> None:
    text = """
    name: shop
    runtime: yaml
    config:
      a: {type: integer, default: 2}
      b: {type: number, default: 2}
      c: {type: List<Number>, default: [1, 2.5]}
      d: {type: object, default: {x: 1}}
      e: {type: boolean, default: false}
    outputs:
      all: ["${a}", "${b}", "${c}", "${d}", "${e}"]
    """
    assert _run(tmp_path, text).exports["all"] == [2, 2, [1, 2.5], {"x": 1}, False]


def test_a_config_given_only_a_value_takes_it_as_its_default(tmp_path: Path) -> None:
    text = """
    name: shop
    runtime: yaml
    config:
      port: 8080
      names: [a, b]
    outputs:
      all: ["${port}", "${names}"]
    """
    assert _run(tmp_path, text).exports["all"] == [8080, ["a", "b"]]


def test_a_config_without_a_type_takes_its_defaults_type_for_a_stacks_value(
    tmp_path: Path,
) -> None:
    # `port: 8080` set to 9090 on the stack read the string "9090".
    text = """
    name: shop
    runtime: yaml
    config:
      port: 8080
      debug: {default: false}
      ratio: 0.5
      names: [a, b]
    outputs:
      all: ["${port}", "${debug}", "${ratio}", "${names}"]
    """
    given = {"shop:port": "9090", "shop:debug": "true", "shop:ratio": "1.5", "shop:names": '["c"]'}
    assert _run(tmp_path, text, given).exports["all"] == [9090, True, 1.5, ["c"]]


def test_a_name_with_a_dot_is_referred_to_in_brackets_as_pulumi_yaml_does(
    tmp_path: Path,
) -> None:
    text = """
    name: shop
    runtime: yaml
    variables:
      index.html: {title: home}
    resources:
      site.config:
        type: kubernetes:core/v1:ConfigMap
        properties:
          metadata: {name: site}
          data: {title: '${["index.html"].title}'}
    outputs:
      title: ${["index.html"]["title"]}
      name: ${["site.config"].metadata.name}
    """
    program = _run(tmp_path, text)
    (site,) = program.resources
    assert site.props["data"] == {"title": "home"}
    assert program.exports["title"] == "home"
    assert isinstance(program.exports["name"], Output)
    assert dependencies_of(program.exports["name"]) == {site}
    with pytest.raises(UsageError, match=r":12: .*names nothing"):
        _run(tmp_path, text.replace('${["index.html"]["title"]}', "${[0].x}"))


def test_an_object_of_a_manifest_component_is_read_through_its_resources(
    tmp_path: Path,
) -> None:
    # `${files.resources}` read null (a component has no live object of its own).
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fc, namespace: apps}\ndata: {x: '1'}\n"
        "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: apps}\n"
    )
    text = """
    name: shop
    runtime: yaml
    resources:
      files:
        type: kubernetes:yaml/v2:ConfigFile
        properties: {file: cm.yaml}
      after:
        type: kubernetes:core/v1:ConfigMap
        properties:
          data: {x: '${files.resources["ConfigMap:apps/fc"].data.x}'}
        options: {dependsOn: "${files.resources}"}
    outputs:
      bad: ${files.spec}
      widget: ${files.resources["Widget:apps/w"].status.anything}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert f"Stackwright.yaml:{_line_of(text, 'bad:')}: ${{files.spec}}: files is a" in message
    assert 'resources["ConfigMap:apps/fc"]' in message and "\n" not in message

    program = _run(tmp_path, text.replace("      bad: ${files.spec}\n", ""))
    found = _by_name(program)
    child = found["ConfigMap:apps/fc"]
    after = found["after"]
    assert dependencies_of(after.props["data"]["x"]) == {child}
    assert list(after.opts.depends_on) == [child, found["Widget:apps/w"]]
    assert "widget" in program.exports  # a custom resource kind's object: any name reads
    with pytest.raises(UsageError, match=r"has no object 'ConfigMap:fc'"):
        _run(tmp_path, text.replace("ConfigMap:apps/fc", "ConfigMap:fc"))
    # An object's field is checked against its kind's schema, as a resource's is (a
    # misspelt one read null).
    line = _line_of(text, "data: {x:")
    for typo, said in (
        ("dta.x", r"resource after: .*: ConfigMap has no field dta \(did you mean data\?\)"),
        ("metadata.nme", "ConfigMap has no field metadata.nme"),
    ):
        with pytest.raises(UsageError, match=rf":{line}: .*{said}"):
            _run(tmp_path, text.replace("].data.x}", f"].{typo}}}"))


@pytest.mark.parametrize(
    ("token", "said"),
    [
        ("kubernetes:yaml/v2:ConfigFiel", "did you mean kubernetes:yaml/v2:ConfigFile?"),
        ("kubernetes:helm.sh/v4:Chrt", "did you mean kubernetes:helm.sh/v4:Chart?"),
        ("kubernetes:apps/v3:Deployment", "apps/v3 is not a group version"),
        ("kubernetes:widgets/v1:Widget", "widgets/v1 is not a group version"),
        (
            "kubernetes:providers:kubernetes",
            "type 'kubernetes:providers:kubernetes' is not a provider type Stackwright has; a "
            "Kubernetes provider's is pulumi:providers:kubernetes or "
            "stackwright:providers:kubernetes",
        ),
    ],
)
def test_a_type_no_cluster_can_serve_is_one_line(tmp_path: Path, token: str, said: str) -> None:
    # Each was taken for a custom resource's kind, and failed at the cluster (exit 1).
    text = f"""
    name: shop
    runtime: yaml
    resources:
      files:
        type: {token}
        properties: {{file: cm.yaml}}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'files:')}: ")
    assert said in message and "\n" not in message, message


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("version: 4.18.0", "option 'version' pins a Pulumi provider plugin; Stackwright has none"),
        (
            "providers: {kubernetes: x}",
            "option 'providers' maps packages to providers; Stackwright has one: give provider: ${name}",
        ),
        ("protec: true", "unknown option 'protec'; did you mean 'protect'?"),
        (
            "retainOnDelet: true",
            "unknown option 'retainOnDelet'; did you mean 'retainOnDelete'? it takes "
            "additionalSecretOutputs, aliases,",
        ),
        (  # a Python program's option: what a YAML program does instead
            "force: true",
            "option 'force' is a Python program's (ResourceOptions(force=…)); a YAML program "
            "takes over conflicting fields with `stackwright up --force-conflicts`",
        ),
        ("transforms: []", "option 'transforms' is a Python program's"),
    ],
)
def test_an_option_stackwright_has_not_says_what_to_do_at_its_line(
    tmp_path: Path, option: str, said: str
) -> None:
    """Named at the option's own line (it was the resource's, lines above), as a known
    option's bad value is."""
    text = f"""
    name: shop
    runtime: yaml
    resources:
      cm:
        type: kubernetes:core/v1:ConfigMap
        properties: {{data: {{a: b}}}}
        options:
          protect: false
          {option}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, option)}: ")
    assert f"resource cm: {said}" in message and "\n" not in message, message


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (
            "{fn::invoke: {function: 'kubernetes:core/v1:ConfigMap/get', arguments: {}}}",
            "fn::invoke calls a Pulumi provider's function, which Stackwright has none of: read "
            "an existing object with a resource whose `get: {id: NAMESPACE/NAME}` takes",
        ),
        (
            "{fn::stringAsset: hello}",
            "fn::stringAsset makes a Pulumi asset or archive, which no Kubernetes field takes: "
            "give the text itself, or fn::readFile for a file's text",
        ),
    ],
)
def test_a_pulumi_function_stackwright_has_not_says_what_to_do(
    tmp_path: Path, call: str, said: str
) -> None:
    # A list of every function named none of these and left a Pulumi YAML user guessing.
    text = """
    name: shop
    runtime: yaml
    resources:
      cm:
        type: kubernetes:core/v1:ConfigMap
        properties:
          data:
            a: b
    """
    _refused(tmp_path, text, "a: b", f"a: {call}", "a: ", said)


@pytest.mark.parametrize(
    ("type_", "properties", "key"),
    [
        (
            "kubernetes:helm.sh/v4:Chart",
            "{chart: CHART, namespace: '${ns.metadata.name}'}",
            "namespace",
        ),
        ("kubernetes:yaml/v2:ConfigFile", "{file: '${ns.metadata.name}'}", "file"),
    ],
)
def test_what_a_chart_or_manifest_is_made_from_must_be_known_when_it_is_declared(
    tmp_path: Path, type_: str, properties: str, key: str
) -> None:
    # A chart's namespace from another resource's output was a TypeError traceback.
    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
    text = f"""
    name: shop
    runtime: yaml
    resources:
      ns:
        type: kubernetes:core/v1:Namespace
        properties: {{metadata: {{name: apps}}}}
      made:
        type: {type_}
        properties: {properties.replace("CHART", str(chart))}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'made:')}: ")
    assert f"resource made: {key} must be known when the program runs" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("type_", "properties", "said"),
    [
        ("kubernetes:yaml/v2:ConfigGroup", "{objs: 5}", "objs must be a mapping or a list"),
        ("kubernetes:yaml/v2:ConfigGroup", "{objs: [5]}", "objs must be a mapping or a list"),
        ("kubernetes:yaml/v2:ConfigGroup", "{files: 5}", "files must be a text or a list"),
        ("kubernetes:yaml/v2:ConfigFile", "{file: [a]}", "file must be a text"),
        ("kubernetes:helm.sh/v4:Chart", "{chart: 5}", "chart must be a text"),
        ("kubernetes:helm.sh/v4:Chart", "{chart: c, repositoryOpts: x}", "repositoryOpts must be"),
        ("kubernetes:helm.sh/v4:Chart", "{chart: c, skipCrds: 1}", "skipCrds must be true or"),
        ("kubernetes:helm.sh/v3:Release", "{chart: c, timeout: 5m}", "timeout must be a whole"),
    ],
)
def test_a_manifest_or_chart_property_of_the_wrong_type_is_one_line(
    tmp_path: Path, type_: str, properties: str, said: str
) -> None:
    # Each was a TypeError or ValueError traceback, exit 1.
    text = f"""
    name: shop
    runtime: yaml
    resources:
      made:
        type: {type_}
        properties: {properties}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'made:')}: ")
    assert f"resource made: {said}" in message and "\n" not in message, message


def test_a_release_takes_its_helm_name_as_pulumi_yamls_does(tmp_path: Path) -> None:
    """Pulumi YAML's Release takes `name`, the Helm release's (the resource's otherwise):
    it was refused as an unknown property."""
    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
    text = f"""
    name: shop
    runtime: yaml
    resources:
      storefront:
        type: kubernetes:helm.sh/v3:Release
        properties: {{chart: {chart}, name: shop-web}}
    """
    (release,) = _run(tmp_path, text).resources
    assert release.resource_name == "storefront" and release.props["name"] == "shop-web"


def test_a_stack_reference_name_that_is_not_a_text_is_one_line(tmp_path: Path) -> None:
    # `name: 5` was an AttributeError traceback.
    text = """
    name: shop
    runtime: yaml
    resources:
      platform:
        type: pulumi:pulumi:StackReference
        properties: {name: 5}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'Stackwright.yaml'}:{_line_of(text, 'platform:')}: ")
    assert "resource platform: name must be a text: PROJECT/STACK or STACK" in message


def test_from_base64_of_what_is_not_base64_is_one_line(tmp_path: Path) -> None:
    # It decoded to "" (the characters that are not base64 dropped), silently.
    text = """
    name: shop
    runtime: yaml
    outputs:
      x: {fn::fromBase64: "%%%"}
    """
    with pytest.raises(UsageError, match=r"Stackwright.yaml:4: fn::fromBase64: "):
        _run(tmp_path, text)
    assert _run(tmp_path, text.replace("%%%", "aGk=")).exports["x"] == "hi"


#: A Deployment and a Role whose nested keys are all the schema's; `# …` marks what the
#: tests below misspell, free-keyed maps hold keys no schema names.
NESTED = """
name: shop
runtime: yaml
variables:
  containers: [{name: web, imag: nginx}]
resources:
  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      metadata:
        labels: {anything.example.com/goes: x}
        annotations: {"any key at all": y}
      spec:
        replicas: 2 # spec
        selector: {matchLabels: {app: web, free: ok}}
        template:
          metadata: {labels: {app: web, free: ok}}
          spec:
            nodeSelector: {example.com/disk: ssd}
            containers:
              - name: web
                image: nginx:1.29
              - name: side
                image: busybox # container
                resources:
                  limits: {cpu: "1", example.com/gpu: 1}
                  requests: {memory: 1Gi}
                env:
                  - name: LABELS
                    valueFrom: {fieldRef: {fieldPath: metadata.labels}} # env
  other:
    type: kubernetes:apps/v1:Deployment
    properties:
      spec:
        selector: ${web.spec.selector}
        template:
          metadata: {fn::fromJSON: '{"labels": {"app": "web"}, "unchecked": 1}'}
          spec:
            containers: ${containers}
  reader:
    type: kubernetes:rbac.authorization.k8s.io/v1:Role
    properties:
      rules:
        - apiGroups: [""]
          resources: [pods] # rule
          verbs: [get]
  config:
    type: kubernetes:core/v1:ConfigMap
    properties:
      data: {"any.key": v, other_key: w}
"""


def test_free_keyed_maps_and_values_computed_when_the_program_runs_are_not_checked(
    tmp_path: Path,
) -> None:
    # Labels, annotations, nodeSelector, resources' limits and requests, a ConfigMap's data
    # take any key; a `${…}` or fn:: call stands for what is known only when it runs.
    program = _run(tmp_path, NESTED)
    assert sorted(_by_name(program)) == ["config", "other", "reader", "web"]


#: A CRD whose schema's `properties:` map free names (spec, size) to schemas, whose own keys
#: are checked.
CRD = """
name: shop
runtime: yaml
resources:
  widgets:
    type: kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition
    properties:
      metadata: {name: widgets.example.com}
      spec:
        group: example.com
        names: {kind: Widget, plural: widgets}
        scope: Namespaced
        versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
                    type: object
                    properties:
                      size: {type: integer, minimum: 1}
"""


def test_a_map_of_free_names_to_objects_checks_each_objects_keys(tmp_path: Path) -> None:
    assert [r.resource_name for r in _run(tmp_path, CRD).resources] == ["widgets"]
    _refused(
        tmp_path,
        CRD,
        "minimum: 1",
        "minimun: 1",
        "size:",
        "resource widgets: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties"
        ".size.minimun: JSONSchemaProps has no field 'minimun'; did you mean 'minimum'?",
    )


def test_checking_properties_loads_no_kind_class_or_typed_dict(tmp_path: Path) -> None:
    # The fields and keys come from one generated table; the classes and TypedDicts (a YAML
    # program declares neither) stay unloaded.
    path = _write(tmp_path, NESTED)
    code = (
        "import sys; from pathlib import Path; from stackwright.engine.program import run_program; "
        f"run_program(Path({str(path)!r}), project={PROJECT!r}, stack={STACK!r}); "
        "print(*(m for m in sys.modules if m.startswith('stackwright.kubernetes.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = {m.split(".")[2] for m in done.stdout.split()}
    assert "fields" in loaded
    assert not loaded & {"inputs", *MODULES.values()}, loaded


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            "replicas: 2 # spec",
            "replicsa: 2",
            "resource web: spec.replicsa: DeploymentSpec has no field 'replicsa'; "
            "did you mean 'replicas'?",
        ),
        (
            "image: busybox # container",
            "imag: busybox",
            "resource web: spec.template.spec.containers[1].imag: Container has no field "
            "'imag'; did you mean 'image'?",
        ),
        (
            "valueFrom: {fieldRef: {fieldPath: metadata.labels}} # env",
            "valueFrom: {fieldRef: {fieldPth: metadata.labels}}",
            "resource web: spec.template.spec.containers[1].env[0].valueFrom.fieldRef.fieldPth: "
            "ObjectFieldSelector has no field 'fieldPth'; did you mean 'fieldPath'?",
        ),
        (
            "labels: {anything.example.com/goes: x}",
            "labelz: {anything.example.com/goes: x}",
            "resource web: metadata.labelz: ObjectMeta has no field 'labelz'; did you mean "
            "'labels'?",
        ),
        (
            "resources: [pods] # rule",
            "resource: [pods]",
            "resource reader: rules[0].resource: PolicyRule has no field 'resource'; did you "
            "mean 'resources'?",
        ),
        (
            "requests: {memory: 1Gi}",
            "zzz: {memory: 1Gi}",
            "resource web: spec.template.spec.containers[1].resources.zzz: ResourceRequirements "
            "has no field 'zzz'; its fields: claims, limits, requests",
        ),
    ],
)
def test_a_misspelt_key_inside_a_built_in_kinds_object_is_one_line_at_its_own_line(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    # It reached the API server's dry run in preview: exit 1, with no file or line.
    _refused(tmp_path, NESTED, old, new, new, said)


NEWER = """
name: shop
runtime: yaml
resources:
  web:
    type: kubernetes:apps/v1:Deployment
    properties:
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            hostnameOverride: web-host
            containers: [{name: web, image: nginx:1.29, restartPolicyRules: []}]
"""

#: How the refusal of a key that is no slip of the keys says to send it (Python's way, in YAML).
WAY_THROUGH = (
    "a field newer than Stackwright's definitions of the kinds: declare the object as "
    "`type: kubernetes:apiextensions.k8s.io:CustomResource` with `apiVersion: apps/v1` and "
    "`kind: Deployment` among its properties, whose fields are not checked)"
)


def test_a_field_newer_than_the_definitions_is_refused_naming_the_way_through(
    tmp_path: Path,
) -> None:
    # Kubernetes 1.34's fields, which a 1.34 cluster takes: no slip of the keys, so the refusal
    # says how to send them, as Python's does.
    _refused(
        tmp_path,
        NEWER,
        "containers: [{name: web, image: nginx:1.29, restartPolicyRules: []}]",
        "containers: [{name: web, image: nginx:1.29}]",
        "hostnameOverride",
        "resource web: spec.template.spec.hostnameOverride: PodSpec has no field "
        f"'hostnameOverride'; did you mean 'hostname'? (or {WAY_THROUGH}",
    )
    _refused(
        tmp_path,
        NEWER,
        "hostnameOverride: web-host",
        "hostname: web-host",
        "restartPolicyRules",
        "Container has no field 'restartPolicyRules'; did you mean 'restartPolicy'? (or "
        + WAY_THROUGH,
    )
    # A slip of the keys is only that.
    with pytest.raises(UsageError) as refused:
        _run(tmp_path, NEWER.replace("hostnameOverride", "hostnam"))
    assert str(refused.value).endswith("PodSpec has no field 'hostnam'; did you mean 'hostname'?")


def test_the_custom_resource_type_declares_a_built_in_kind_with_its_fields_unchecked(
    tmp_path: Path,
) -> None:
    # As Python's k8s.apiextensions.CustomResource(name, api_version=…, kind=…): the same
    # resource (type token, URN) as the kind's own type declares, the newer fields sent.
    custom = NEWER.replace(
        "type: kubernetes:apps/v1:Deployment",
        "type: kubernetes:apiextensions.k8s.io:CustomResource",
    ).replace(
        "metadata: {name: web}",
        "apiVersion: apps/v1\n      kind: Deployment\n      metadata: {name: web}",
    )
    (web,) = _run(tmp_path, custom).resources
    assert web.resource_type == "kubernetes:apps/v1:Deployment"
    assert web.urn == f"urn:sw:{STACK}::{PROJECT}::kubernetes:apps/v1:Deployment::web"
    assert web.props["apiVersion"] == "apps/v1" and web.props["kind"] == "Deployment"
    pod = web.props["spec"]["template"]["spec"]
    assert pod["hostnameOverride"] == "web-host"
    assert pod["containers"][0]["restartPolicyRules"] == []


CUSTOM = """
name: shop
runtime: yaml
resources:
  web:
    type: kubernetes:apiextensions.k8s.io:CustomResource
    properties:
      apiVersion: apps/v1
      kind: Deployment
"""


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("kind: Deployment", "kinds: Deployment", "needs `kind:` among its properties"),
        ("apiVersion: apps/v1", "apiVersion: 1", "needs `apiVersion:` among its properties"),
        (
            "apiVersion: apps/v1\n      kind: Deployment",
            "metadata2: {}",
            "needs `apiVersion:` and `kind:` among its properties, as a text known when the "
            "program runs (e.g. apiVersion: apps/v1, kind: Deployment)",
        ),
    ],
)
def test_a_custom_resource_without_its_api_version_or_kind_is_one_line_at_its_entry(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    _refused(
        tmp_path,
        CUSTOM,
        old,
        new,
        "web:",
        f"resource web: kubernetes:apiextensions.k8s.io:CustomResource {said}",
    )


def test_a_read_of_the_custom_resource_type_names_the_kinds_own_type(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        CUSTOM,
        "properties:\n      apiVersion: apps/v1\n      kind: Deployment",
        "get: {id: apps/web}",
        "web:",
        "resource web: `get:` reads an object by its kind's own type "
        "(kubernetes:apps/v1:Deployment, kubernetes:example.com/v1:Widget), not "
        "kubernetes:apiextensions.k8s.io:CustomResource",
    )


WIDGET_PATCH = """
name: shop
runtime: yaml
resources:
  extra:
    type: kubernetes:example.com/v1:WidgetPatch
    properties:
      apiVersion: example.com/v1
      kind: Widget
      metadata: {name: w1, namespace: team}
      spec: {size: 3}
"""


@pytest.mark.parametrize(
    "declared",
    [
        WIDGET_PATCH,
        # Pulumi's type for a Patch of any kind, its apiVersion and kind among its properties
        WIDGET_PATCH.replace(
            "kubernetes:example.com/v1:WidgetPatch",
            "kubernetes:apiextensions.k8s.io:CustomResourcePatch",
        ),
    ],
)
def test_a_custom_kinds_patch_is_declared_as_pythons_custom_resource_patch(
    tmp_path: Path, declared: str
) -> None:
    # As Python's k8s.apiextensions.CustomResourcePatch("extra", api_version="example.com/v1",
    # kind="Widget", …), and as a built-in kind's (kubernetes:apps/v1:DeploymentPatch) is.
    (extra,) = _run(tmp_path, declared).resources
    assert extra.resource_type == "kubernetes:example.com/v1:WidgetPatch"
    assert extra.urn == f"urn:sw:{STACK}::{PROJECT}::kubernetes:example.com/v1:WidgetPatch::extra"
    assert extra.props == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "team"},
        "spec": {"size": 3},
    }
    assert is_patch(extra)


@pytest.mark.parametrize("kind", ["kind: WidgetPatch", "data: {}"])
def test_a_crds_own_kind_that_ends_in_patch_is_still_an_object(tmp_path: Path, kind: str) -> None:
    (widget,) = _run(tmp_path, WIDGET_PATCH.replace("kind: Widget", kind)).resources
    assert widget.resource_type == "kubernetes:example.com/v1:WidgetPatch"
    assert widget.props["kind"] == "WidgetPatch"
    assert not is_patch(widget)


def test_a_custom_kinds_patch_naming_another_kind_is_one_line(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        WIDGET_PATCH,
        "kind: Widget",
        "kind: Gadget",
        "extra:",
        "resource extra: kind 'Gadget' differs from its type's 'WidgetPatch' (a Patch of a "
        "Widget says kind: Widget)",
    )
    _refused(
        tmp_path,
        WIDGET_PATCH.replace(
            "kubernetes:example.com/v1:WidgetPatch",
            "kubernetes:apiextensions.k8s.io:CustomResourcePatch",
        ),
        "kind: Widget",
        "data: {}",
        "extra:",
        "resource extra: kubernetes:apiextensions.k8s.io:CustomResourcePatch needs `kind:` "
        "among its properties",
    )


SHARED = """
name: shop
runtime: yaml
resources:
  one:
    type: kubernetes:yaml/v2:ConfigGroup
    properties:
      yaml: ["apiVersion: v1\\nkind: Namespace\\nmetadata: {name: shared}\\n"]
  two:
    type: kubernetes:yaml/v2:ConfigGroup
    properties:
      yaml: ["apiVersion: v1\\nkind: Namespace\\nmetadata: {name: shared}\\n"]
"""


def test_one_object_of_two_manifests_is_told_apart_in_the_yaml_programs_words(
    tmp_path: Path, stack: Stack
) -> None:
    # A YAML program spells the option `resourcePrefix` and has no transformations: the
    # messages Python programs get (`resource_prefix`, "a transformation") would not fit.
    with pytest.raises(UsageError) as refused:
        _run(tmp_path, SHARED)
    assert str(refused.value).endswith("; give one of their components a resourcePrefix")
    program = _run(tmp_path, SHARED + "      resourcePrefix: two\n")
    assert program.runtime == "yaml"
    with pytest.raises(UsageError) as refused:
        operations.run(
            stack.backend,
            project=PROJECT,
            stack=STACK,
            options=Options("up", dry_run=True),
            program=program,
            providers=stack.fake.factory(),
            listener=lambda _: None,
        )
    assert str(refused.value).endswith(
        "leave it out of one of them (take it out of its file, `yaml` or `objs`, or turn it off "
        "in the chart's values), or declare it once in the program; nothing was changed"
    )
    assert stack.fake.calls == []


def test_an_object_made_outside_is_told_adopted_in_the_yaml_programs_words(
    tmp_path: Path, stack: Stack
) -> None:
    # A YAML program adopts with `options: {import: …}`: Python's ResourceOptions(import_=…)
    # would not fit it.
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                    "data": {"owner": "someone"}}, manager="kubectl")  # fmt: skip
    program = _run(
        tmp_path,
        """
        name: shop
        runtime: yaml
        resources:
          settings:
            type: kubernetes:core/v1:ConfigMap
            properties:
              metadata: {name: settings}
              data: {owner: me}
        """,
    )
    summary = operations.run(
        stack.backend,
        project=PROJECT,
        stack=STACK,
        options=Options("up", dry_run=True),
        program=program,
        providers=stack.fake.factory(),
        listener=lambda _: None,
    )
    assert not summary.ok
    (failure,) = summary.failures
    assert failure.endswith(
        "ConfigMap default/settings already exists (it is not this stack's: made outside it, or forgotten by `state delete`): adopt it "
        "with `options: {import: default/settings}` or `stackwright import`, or give this "
        "resource another name"
    )


def test_a_component_has_the_type_the_program_writes_and_its_stack_made_before_keeps_its_objects(
    tmp_path: Path, stack: Stack
) -> None:
    # As Pulumi YAML's: `kubernetes:yaml/v2:ConfigGroup` in its URN, not the Python class's
    # `kubernetes:yaml:ConfigGroup`, which a stack made before the change has (Python's
    # ConfigGroup is what the YAML program declared then): renamed by an alias, not replaced.
    import stackwright.kubernetes as k8s
    from stackwright.engine.yaml_program import run_yaml_program

    (tmp_path / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n"
    )
    path = _write(
        tmp_path,
        """
        name: shop
        runtime: yaml
        resources:
          group:
            type: kubernetes:yaml/v2:ConfigGroup
            properties:
              files: [app.yaml]
          file:
            type: kubernetes:yaml/v2:ConfigFile
            properties:
              file: app2.yaml
        """,
    )
    (tmp_path / "app2.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {b: '2'}\n"
    )
    before = stack.up(
        lambda _: (
            k8s.yaml.ConfigGroup("group", files=[str(tmp_path / "app.yaml")]),
            k8s.yaml.ConfigFile("file", file=str(tmp_path / "app2.yaml")),
        )
    )
    assert before.ok
    old = sorted(r.urn for r in stack.state().resources)
    assert any("::kubernetes:yaml:ConfigGroup$kubernetes:core/v1:ConfigMap::" in u for u in old)

    for run in (stack.preview, stack.up):
        summary = run(lambda _: run_yaml_program(path))
        assert summary.ok, summary.failures
        assert {op for op, _ in stack.started()} <= {"same", "update"}, stack.started()
    types = sorted(r.urn.split("::")[2] for r in stack.state().resources)
    assert types == [
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:yaml/v2:ConfigFile$kubernetes:core/v1:Secret",
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:yaml/v2:ConfigGroup$kubernetes:core/v1:ConfigMap",
    ]
    assert [c.method for c in stack.fake.calls if c.method == "delete"] == []


def test_messages_name_an_option_as_yaml_spells_it(tmp_path: Path, stack: Stack) -> None:
    """The replacement reason and the stale-environment warning name `replaceOnChanges`,
    the option a YAML program writes, not Python's `replace_on_changes`."""
    text = """
        name: shop
        runtime: yaml
        resources:
          env:
            type: kubernetes:core/v1:ConfigMap
            properties: {data: {mode: MODE}}
          web:
            type: kubernetes:apps/v1:Deployment
            properties:
              spec:
                selector: {matchLabels: {app: web}}
                template:
                  metadata: {labels: {app: web}}
                  spec: {containers: [{name: web, image: "nginx:1.29", envFrom: [ENV]}]}
          pinned:
            type: kubernetes:core/v1:ConfigMap
            properties: {data: {mode: MODE}}
            options: {replaceOnChanges: [data]}
    """

    def run(mode: str, **options: Any) -> Any:
        stack.events = []
        return operations.run(
            stack.backend,
            project=PROJECT,
            stack=STACK,
            options=Options("up", **options),
            program=_run(
                tmp_path,
                text.replace("MODE", mode).replace(
                    "ENV", '{configMapRef: {name: "${env.metadata.name}"}}'
                ),
            ),
            providers=stack.fake.factory(),
            listener=stack.events.append,
        )

    assert run("fast").ok
    planned = run("slow", dry_run=True)

    (replaced,) = [e.step for e in stack.of(StepStarted) if e.step.urn.endswith("::pinned")]
    assert replaced.replace_reasons == ("data: replaceOnChanges lists it",)
    (warning,) = [e.message for e in stack.of(Diagnostic) if e.severity == "warning"]
    assert 'give it options: {replaceOnChanges: ["data"]} and no fixed name' in warning
    assert "replace_on_changes" not in warning
    assert planned.ok


def test_option_notes_and_refusals_name_options_as_yaml_spells_them(
    tmp_path: Path, stack: Stack
) -> None:
    """What a same step records, a managed resource turned into a read, and a dropped CRD
    name the options as a YAML program writes them (retainOnDelete, customTimeouts.delete),
    one table for the loader and the messages; Python's names stay in Python programs."""

    def up(text: str) -> Any:
        stack.events = []
        return operations.run(
            stack.backend,
            project=PROJECT,
            stack=STACK,
            options=Options("up"),
            program=_run(tmp_path, text),
            providers=stack.fake.factory(),
            listener=stack.events.append,
        )

    settings = """
  settings:
    type: kubernetes:core/v1:ConfigMap
    properties: {metadata: {name: settings}, data: {a: "1"}}
"""
    widget = """
  w:
    type: kubernetes:example.com/v1:Widget
    properties: {metadata: {name: w, namespace: default}, spec: {size: 2}}
"""
    assert up(CRD + settings + widget).ok
    opts = "    options: {retainOnDelete: true, customTimeouts: {delete: 5m}}\n"
    assert up(CRD + settings + opts + widget).ok
    (note,) = [e.message for e in stack.of(Diagnostic) if e.urn.endswith("::settings")]
    assert note.endswith(
        "recorded in the state only: retainOnDelete false → true; "
        "customTimeouts.delete (default) → 300s"
    ), note

    without_crd = "name: shop\nruntime: yaml\nresources:\n" + settings + widget
    with pytest.raises(UsageError) as refused:
        up(without_crd)
    assert "give the CRD `options: {retainOnDelete: true}` and run" in str(refused.value)

    read = "  settings:\n    type: kubernetes:core/v1:ConfigMap\n    get: {id: default/settings}\n"
    as_read = up(CRD + read + widget)
    (failure,) = [f for e in stack.of(Summary) for f in e.failures]
    assert not as_read.ok and "object is then deleted unless retainOnDelete)" in failure
