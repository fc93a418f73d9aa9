"""Stackwright's errors, split by what the caller does next.

    StackwrightError              the operation failed (exit code 1)
    ├── ClusterUnreachable        a cluster never answered in this operation: the run stops
    │                             before its steps, which would each fail the same way
    ├── UsageError                bad input or usage: fix the command or file (exit code 2)
    ├── InputsRejected            the cluster refused a resource's own inputs (exit code 2 in
    │                             a preview, which changed nothing; 1 in an up, which may have)
    ├── PolicyViolation           a mandatory policy blocked the change (exit code 3)
    └── StackLocked               another operation holds the stack (exit code 4)

Messages are written for the user: what, where, how to fix, on one line.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Collection
from typing import Any


class StackwrightError(Exception):
    exit_code = 1


class ClusterUnreachable(StackwrightError):
    """A cluster's API server has not answered once in this operation (connection refused,
    no such host, a failed TLS handshake, a timeout). `reason`: the message without the
    object that asked, to say of the whole run. `sent`: whether the request may have reached
    it — a write that timed out may have landed; a read, or a write whose every attempt
    failed to connect, changed nothing."""

    def __init__(self, message: str, reason: str | None = None, *, sent: bool = True) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.sent = sent


class UsageError(StackwrightError):
    exit_code = 2


class InputsRejected(StackwrightError):
    """The cluster refused an object for its own inputs (an API server's 422 Invalid or 400
    BadRequest to its apply or its dry run): bad input, which the user fixes in the program at
    the resource's line. Its exit code is the run's to decide (`Summary.exit_code`): 2 where
    nothing was changed, the failed operation's 1 where other steps may have changed the
    cluster."""

    #: The namespace the cluster lacks, when that is the refusal (the object names one that
    #: no one made): a namespace of the stack's deleted since is drift, not bad input.
    missing_namespace: str | None = None

    def beyond_immutable(self, forcing: Collection[str] = ()) -> str | None:
        """What the refusal names besides fields that cannot change once set (those that
        force a delete-first replacement, which a new object does not meet; `forcing`: the
        paths the plan says force it, refused however the server words it): the message
        for those others, or None when there are none or the refusal does not say field by
        field (then it is no verdict on a new object)."""
        return None


class PolicyViolation(StackwrightError):
    exit_code = 3


class StackLocked(StackwrightError):
    exit_code = 4


# --- places in the user's program ---------------------------------------------------------------


def located(where: object | None, message: str) -> str:
    """`FILE:LINE: message`, the one form of every message about a place in the user's
    program (a resource's declaring line, a YAML program's field, a policy finding's
    object), as compilers write it and editors and CI annotate it: `app.py:12: Deployment
    'web': spec.replicas must be an integer, got 'three'; give a number`. `where` is the
    FILE:LINE (a `Declaration`), or the FILE alone, its file shown as `shown_path` shows it;
    None when no place is known (the message alone)."""
    if where is None:
        return message
    place = str(where)
    if _started_in:
        file, colon, line = place.rpartition(":")
        place = f"{shown_path(file)}:{line}" if colon and line.isdigit() else shown_path(place)
    return f"{place}: {message}"


#: The directory the command was started in, as the prefixes of a path under it (as named
#: and with symlinks resolved: `/tmp/x/` and `/private/tmp/x/`); none: nothing recorded.
_started_in: tuple[str, ...] = ()

#: `shown_path` of absolute paths under no prefix as named (their real path may be).
_shown_real: dict[str, str] = {}


def record_starting_directory(folder: str | None) -> None:
    """Messages name a file under `folder` relative to it (`app.py:12`,
    `config/app.yaml:3`), as mypy, ruff and gcc name it from the directory they were
    started in; a file elsewhere keeps its absolute path (never `../`). The CLI records its
    working directory as it starts (after `--cwd DIR`, which means started in DIR) — a
    program runs from its own folder, so the directory of the moment says nothing then —
    and None as it ends. With nothing recorded (the automation API used from a script, the
    operator) every path stays absolute."""
    global _started_in
    _shown_real.clear()
    if folder is None:
        _started_in = ()
        return
    named, real = os.path.abspath(folder), os.path.realpath(folder)
    _started_in = tuple(dict.fromkeys(p.rstrip(os.sep) + os.sep for p in (named, real)))


def shown_path(path: str | os.PathLike[str]) -> str:
    """`path` as a message names it: relative to the recorded starting directory when it
    is under it (the directory itself as `.`), else as given (absolute, or already relative
    to it). A plain prefix test; only an absolute path outside it as named has its symlinks
    resolved (`/tmp/x/a.py` under `/private/tmp/x`), once per path."""
    path = os.fspath(path)
    for prefix in _started_in:
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            if ".." not in rest:  # else it may step out of it (`main: ../lib/app.py`)
                return rest or os.curdir
            break
    if not _started_in or not os.path.isabs(path):
        return path
    shown = _shown_real.get(path)
    if shown is None:
        shown, real = path, os.path.realpath(path)
        for prefix in _started_in:
            if (real + os.sep).startswith(prefix):
                shown = real[len(prefix) :] or os.curdir
                break
        _shown_real[path] = shown
    return shown


# --- the user's files ---------------------------------------------------------------------------


def yaml_problem(exc: Exception, source: str | None = None) -> str:
    """A PyYAML error on one line, `line 2, column 1: expected ',' or ']' (while parsing a flow
    sequence from line 1, column 4)`; PyYAML's own text spans several lines and quotes the
    source. Given the `source` text, the slips it is known for are named (`yaml_slip`). The
    caller names the file."""
    place = _yaml_place(exc, source)
    at = f"line {place[0] + 1}, column {place[1] + 1}: " if place else ""
    return f"{at}{_yaml_said(exc)}{yaml_slip(exc, source)}"


def not_valid_yaml(path: object, exc: Exception, source: str | None = None) -> str:
    """A user's YAML file PyYAML refused, in the `FILE:LINE: …` form of every other mistake
    in a YAML program: `Stackwright.yaml:5: not valid YAML (column 28): expected ',' or ']',
    but got '{' (while parsing …)`, and the slip `yaml_slip` names."""
    place = _yaml_place(exc, source)
    said = f"{_yaml_said(exc)}{yaml_slip(exc, source)}"
    if place is None:  # no place known: only without the source, for a reader's
        return located(path, f"not valid YAML: {said}")
    return located(f"{path}:{place[0] + 1}", f"not valid YAML (column {place[1] + 1}): {said}")


def _yaml_place(exc: Exception, source: str | None) -> tuple[int, int] | None:
    """Where PyYAML stopped: the 0-based line and column of its problem, or of the character
    its reader refused (a control character), which it places only by an offset into the
    stream (of characters for PyYAML's reader, of bytes for libyaml's): the first one of it
    in `source` is that one, as the reader refuses it wherever it stands."""
    mark = getattr(exc, "problem_mark", None)
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    if isinstance(line, int) and isinstance(column, int):
        return line, column
    character = getattr(exc, "character", None)
    if source is None or not isinstance(character, int):
        return None
    offset = source.find(chr(character))
    if offset == -1:
        return None
    before = source[:offset]
    return before.count("\n"), offset - (before.rfind("\n") + 1)


def _yaml_said(exc: Exception) -> str:
    """PyYAML's problem, with its context and where that began: `expected ',' or ']', but got
    '{' (while parsing a flow sequence from line 1, column 4)`; for its reader's refusal,
    the character and why, without the offset (`_yaml_place` says where)."""
    character, reason = getattr(exc, "character", None), getattr(exc, "reason", None)
    if isinstance(character, int) and reason:  # a ReaderError
        return f"unacceptable character #x{character:04x}: {reason}"
    if not getattr(exc, "problem", None):
        return " ".join(str(exc).split())
    text = str(getattr(exc, "problem", ""))
    context = getattr(exc, "context", None)
    if context:
        start = _yaml_at(getattr(exc, "context_mark", None)).removesuffix(": ")
        text += f" ({context}{' from ' + start if start else ''})"
    return text


def yaml_slip(exc: Exception, source: str | None) -> str:
    """`: YAML is indented with spaces …` when the text where PyYAML stopped shows a slip its message
    leaves the reader to find: a tab, or a `${…}` reference unquoted inside `{…}` / `[…]`
    (a Pulumi YAML habit: there `{` is YAML's own); "" otherwise."""
    place = _yaml_place(exc, source)
    if source is None or place is None:
        return ""
    line, column = place
    lines = source.splitlines()
    text = lines[line] if line < len(lines) else ""
    if "\t" in text[: column + 1]:
        return ": YAML is indented with spaces, not tabs: replace the tab with spaces"
    if text[column : column + 1] == "{" and text[column - 1 : column] == "$":
        return (
            ": a ${…} reference inside {…} or […] is read as YAML's own braces; quote it, "
            f"as '{_reference_at(text, column - 1)}'"
        )
    return ""


def _reference_at(text: str, start: int) -> str:
    end = text.find("}", start)
    return text[start : end + 1] if end != -1 else "${name}"


def _yaml_at(mark: object) -> str:
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    if not isinstance(line, int):
        return ""
    return (
        f"line {line + 1}, column {column + 1}: "
        if isinstance(column, int)
        else f"line {line + 1}: "
    )


def no_such_day(path: object, exc: ValueError, source: str) -> str:
    """A YAML date that names no real day (`expires: 2026-13-01`), which PyYAML raises as a
    bare ValueError (`month must be in 1..12`) with no place, in the `FILE:LINE: …` form:
    each date of `source` is read again to find it."""
    import yaml

    loader = yaml.SafeLoader("")
    # It parsed (its dates failed as they were made): the nodes are there to read.
    pending: list[Any] = list(yaml.compose_all(source, Loader=yaml.SafeLoader))
    while pending:
        node = pending.pop(0)
        if isinstance(node, yaml.MappingNode):
            pending[:0] = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            pending[:0] = node.value
        elif node is not None and node.tag == "tag:yaml.org,2002:timestamp":
            try:
                loader.construct_yaml_timestamp(node)
            except ValueError:
                return located(
                    f"{path}:{node.start_mark.line + 1}",
                    f"{node.value} is no day ({exc}): write a real date as YYYY-MM-DD",
                )
    return located(path, f"not valid YAML: {exc}")


def not_utf8(what: str, exc: UnicodeDecodeError) -> UsageError:
    """The error for a file of the user's that is not UTF-8 text; `what` names the file."""
    return UsageError(
        f"{what} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
        "save it as UTF-8"
    )


# --- secret values in messages -----------------------------------------------------------------
#
# Every secret this process decrypts or is handed as a secret (`Output.secret`, a secret
# configuration value, a secret read from the environment or a file) is remembered here, so
# that an error message that quotes one — a program's own exception, an API server echoing a
# field — shows [secret] instead. Short values are masked only where they stand quoted whole
# (`Unsupported value: "ab"`, as an API server quotes a field): masking every "1" or "a"
# would make messages unreadable.

_known_secrets: set[str] = set()
_short_secrets: dict[str, str] = {}  # a short value quoted -> the same quotes around [secret]
_MIN_SECRET = 4
#: How a message quotes a value whole: as Go's %q and JSON do, escaped once more inside a
#: JSON text, in single quotes (Python's repr) and in backquotes.
_QUOTES = ('"{}"', '\\"{}\\"', "'{}'", "`{}`")


def remember_secret(value: object) -> None:
    """Remember the text values in `value` (a string, or a structure of them) as secrets."""
    if isinstance(value, str):
        if len(value) >= _MIN_SECRET:
            # As given, base64-encoded (a Secret's data), and escaped as JSON and Go quote
            # strings (an API server echoing the value, a --json line carrying a message).
            _known_secrets.update((value, value.upper(), value.lower()))
            _known_secrets.add(base64.b64encode(value.encode()).decode())
            _known_secrets.add(json.dumps(value)[1:-1])
            _known_secrets.add(json.dumps(value, ensure_ascii=False)[1:-1])
            _known_secrets.add(json.dumps(json.dumps(value))[3:-3])  # escaped twice
        elif value:
            for quote in _QUOTES:
                for form in (value, json.dumps(value)[1:-1]):
                    _short_secrets[quote.format(form)] = quote.format("[secret]")
    elif isinstance(value, dict):
        for item in value.values():
            remember_secret(item)
    elif isinstance(value, list | tuple):
        for item in value:
            remember_secret(item)


#: The remembered secrets, longest first (a secret inside another is replaced after it),
#: kept until the set changes: sorting on every call cost more than the search.
_ordered: list[str] = []


def redact(text: str) -> str:
    """`text` with every remembered secret value shown as [secret]."""
    global _ordered
    for quoted, masked in _short_secrets.items():
        if quoted in text:
            text = text.replace(quoted, masked)
    if not _known_secrets:
        return text
    if len(_ordered) != len(_known_secrets):  # the set only grows, or is cleared
        _ordered = sorted(_known_secrets, key=len, reverse=True)
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, "[secret]")
    return text


def redact_parts(text: str, given: Collection[str]) -> str:
    """`redact(text)`, and every run of four or more characters of it that is part of one
    of the secret texts `given` shown as [secret] too: for what a program's own code said
    of the secrets it was given, which may quote a part of one (`int(v.split("-")[0])`:
    `'keyquokka'` of `keyquokka-7731`). A word of the text that happens to be in one is
    masked with it: more than needed, never less. Only those given: every remembered secret
    (a stack's TLS keys, their base64 and case variants) would mask most words of a message,
    and take seconds to search."""
    text = redact(text)[:1000]  # one line of a message: a longer one is cut, not searched
    secrets = sorted((s for s in given if len(s) >= _MIN_SECRET), key=len, reverse=True)
    kept: list[str] = []
    start = at = 0
    while at < len(text) and secrets:
        if text.startswith("[secret]", at):  # a mask `redact` put there: no part of a secret
            at += len("[secret]")
            continue
        length = 0
        for secret in secrets:
            while at + length < len(text) and text[at : at + length + 1] in secret:
                length += 1
        if length >= _MIN_SECRET:
            kept += [text[start:at], "[secret]"]
            at = start = at + length
        else:
            at += 1
    return "".join([*kept, text[start:]])


def redact_within(value: Any) -> Any:
    """A JSON-like `value` with every remembered secret in its strings (keys too) shown as
    [secret]: a document stays a document even when a secret is `true` or `1234`, which
    redacting its serialized text would turn into `"ok":[secret]`. Anything else is
    written as its text, as the JSON writers' `default=str` does."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_within(k): redact_within(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_within(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value))


#: libpq's `password=VALUE` keyword (the value quoted in '' when it holds spaces).
_PASSWORD_WORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


#: Schemes whose user name alone names an account, not a credential (`postgresql://app@db/state`,
#: `ssh://git@github.com/x`): shown. In any other URL a user name alone is a token (`https://
#: ghp_…@github.com/x`, a chart repository's or registry's), as Git and Helm send it.
_USER_NAMED = frozenset({"postgresql", "postgres", "ssh", "git+ssh"})

#: Schemes with no credential at all: a `file://` URL's "authority" is a relative path's
#: first folder (`file://me@work/state.db`).
_NO_CREDENTIAL = frozenset({"file"})

#: Where a URL's authority ends.
_AUTHORITY_END = re.compile(r"[/?#]")

#: A chart's or image's digest at a URL's end (`oci://host:5000/chart@sha256:…`): its '@' is
#: the path's, not the end of a user's password (which a host's port then looked like).
_DIGEST = re.compile(r"@[A-Za-z][A-Za-z0-9+._-]*:[0-9a-fA-F]{32,}$")


def url_shown(url: str, plain: Collection[str] = ()) -> str:
    """`url` as a message may show it: the password of its authority (`user:pass@`), a user
    name alone where it is a token (`https://TOKEN@host`: but a database's or ssh's user,
    `_USER_NAMED`) and the value of each query option but those named `plain` as [secret].
    A backend, server, chart repository or Git URL may carry one (`postgresql://app:pw@db/state`,
    libpq's `?password=`), and so may text that is no URL (libpq's `host=db password=pw`, a
    URL without its scheme)."""
    scheme, sep, rest = url.partition("://")
    if not sep:  # a path; or a URL without its scheme, libpq's keywords (`password=…`)
        rest = url
    digest = _DIGEST.search(rest)
    if digest is not None:
        rest = rest[: digest.start()]
    # The password runs to the last '@': one not %-encoded may hold '/', '?' or '#' (a
    # base64 one does), which would end the authority before it. (An '@' in a query then
    # hides more than the password: the safe side.)
    userinfo, at, after = rest.rpartition("@")
    shown = ""
    if sep and scheme.lower() in _NO_CREDENTIAL:
        pass  # a path, whatever '@' or ':' it holds (`file://C:/Users/me@work/state.db`)
    elif at and ":" in userinfo and not rest.startswith("/"):
        shown, rest = f"{userinfo.partition(':')[0]}:[secret]@", after
    elif sep and scheme.lower() not in _USER_NAMED:
        # A token is within the authority: an '@' past it is the path's (a chart's digest).
        token, at, _ = _AUTHORITY_END.split(rest, maxsplit=1)[0].rpartition("@")
        if token:
            shown, rest = "[secret]@", rest[len(token) + 1 :]
    end = "" if digest is None else digest.group()
    if not sep:
        return shown + _PASSWORD_WORD.sub(r"\1[secret]", rest) + end
    rest, question, query = rest.partition("?")
    options = [
        option if name in plain or not has_value else f"{name}=[secret]"
        for option in query.split("&")
        for name, has_value, _ in [option.partition("=")]
    ]
    return f"{scheme}://{shown}{rest}{question}{'&'.join(options)}{end}"


def forget_secrets() -> None:
    """Forget every remembered secret (between independent runs in one process, e.g. tests)."""
    global _ordered
    _known_secrets.clear()
    _short_secrets.clear()
    _ordered = []
