"""Go's regular expressions (RE2) as Python's `re` runs them, for what the API server
matches with Go's `regexp`: CEL's `matches` / `find`, and a schema's `pattern`.

Must never: match what RE2 would not on the classes both spell alike (`\\d` is ASCII
digits only in RE2, any script's in Python's default mode).
"""

from __future__ import annotations

import functools
import re

#: RE2's POSIX classes inside a bracket expression (`[[:upper:]_]`), which Python's re
#: reads as a set of their letters.
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


@functools.lru_cache(maxsize=256)
def compile_re2(pattern: str) -> re.Pattern[str]:
    """An RE2 pattern as Python's re runs it: `\\d`, `\\w`, `\\s` and `\\b` ASCII only, as
    RE2's are (Python's match any script's digits and letters), POSIX classes spelled out.
    A case-insensitive pattern (`(?i)`) keeps Unicode, whose case folding RE2's has too
    (Python's ASCII mode folds ASCII letters only). Raises re.error when it does not compile."""
    spelled = re.sub(r"(?<!\\)\[:([a-z]+):\]", lambda m: _POSIX_CLASSES.get(m[1], m[0]), pattern)
    folds = re.search(r"\(\?[a-zA-Z]*i", spelled) is not None
    return re.compile(spelled, 0 if folds else re.ASCII)
