"""One value, or one JSON document, on a line: as every command writes them.

`compact` is how a display shows a value (an output, a field in a diff); `json_line` is how
every `--json` line is written, `error_line` the one a failed command ends with;
`json_document` is what a command that reports data prints with `--json`. The live
displays (`render`) use them, and so do the commands that only read a stack (`stack output`).

Must never: import the engine or rich (every command imports this).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from stackwright.model import SECRET_TEXT, UNKNOWN_TEXT, shown

#: Field values longer than this are cut in diffs and drift lines.
VALUE_WIDTH = 80


def compact(value: Any, width: int | None = VALUE_WIDTH) -> str:
    """A value on one line: JSON, masked and unknown markers bare, cut at `width`."""
    if isinstance(value, str) and value in (SECRET_TEXT, UNKNOWN_TEXT):
        return value
    try:
        text = json.dumps(shown(value), ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # keys JSON cannot hold, self-references
        text = str(value)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


#: orjson options matching `json.dumps(..., default=str)`: keys that are not strings are
#: written as strings; dataclasses and datetimes go through `default` (str) as with json.
_ORJSON = (
    orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def error_line(message: str, exit_code: int) -> str:
    """The `error` event a `--json` command ends with when an error stops it."""
    return json_line({"event": "error", "message": message, "exitCode": exit_code})


def json_line(document: dict[str, Any]) -> str:
    """One compact JSON line, as every `--json` line is written (events, the final error). orjson takes about a tenth of json's time (3,000 events of a
    1,000-resource `up`: 1 ms against 11 ms); json remains for what orjson refuses
    (integers beyond 64 bits)."""
    try:
        return orjson.dumps(document, default=str, option=_ORJSON).decode()
    except TypeError:
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"), default=str)


def json_document(value: Any, *, sort_keys: bool = False) -> str:
    """What a command that reports data (`stack ls`, `stack history`, `config`, `cluster
    list`, …) prints with `--json`: one JSON document, indented as Pulumi's and kubectl's
    are; events and the lines of commands that change something stay `json_line`s."""
    return json.dumps(value, indent=2, sort_keys=sort_keys, ensure_ascii=False)
