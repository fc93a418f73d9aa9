"""What a container's command does, read as busybox's `sh` would run it: whether it ends by
itself, how long its `sleep`s take, and the code it exits with.

The simulated kubelet runs no program: it reads the command. A shell script (`sh -c
SCRIPT`, `bash -c`, …) is cut into its top-level statements by a small tokenizer (quotes,
escapes, `$(…)`, comments, here-documents' lines skipped; compound commands — `if`, `while`, `until`, `for`, `case`,
`{ }`, `( )` — kept whole); a command without a shell is one statement of its words,
never split. Only the words in KNOWN, `sleep`, `exit`, `true` / `false`, the endless
forms (`sleep infinity`, `tail -f`, a `while true` loop nothing leaves) and a program
reading its standard input (a shell or a REPL given no script, `cat` given no file: at
its end at once, unless the container keeps it open with `stdin` or `tty`) are
understood; any other program is one the kubelet cannot know: assumed to succeed, and
perhaps a server that never ends.

Must never: call a command failing, or certain to end, when a real shell might run it
otherwise — a statement that is reached only on a condition (`cmd || exit 1`, `if …; then
exit 1; fi`, `test -f x && exit 1`) does not decide how the script exits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: Shells whose `-c` takes a script.
SHELLS = frozenset({"sh", "ash", "bash", "dash", "ksh", "zsh"})
#: Programs that read what to do from their standard input when given only options (no
#: script, no file): shells, interpreters' REPLs (`python3`, `node`, `irb`, `perl -de0`,
#: `php -a`, `jshell`, `erl`, `iex`, `julia`, `R`, `ghci`), `cat`. A container's standard
#: input is empty unless it has `stdin: true`.
READERS = SHELLS | {
    "python", "python3", "pypy", "pypy3", "node", "irb", "perl", "php", "jshell", "erl", "iex",
    "julia", "R", "ghci", "cat",
}  # fmt: skip
#: Readers that refuse a standard input that is not a terminal unless an option says what
#: to do with the session, and the code they exit with: R's "Fatal error: you must specify
#: '--save', '--no-save' or '--vanilla'".
REFUSING_READERS = {"R": (2, frozenset({"--save", "--no-save", "--vanilla"}))}
#: Programs that end by themselves at once and succeed (with the files they name, as
#: assumed for every program): what a container's command prints, sets up, or looks at.
KNOWN = frozenset(
    {"echo", "printf", "date", "env", "printenv", "ls", "cat", "touch", "mkdir", "cp", "mv",
     "rm", "hostname", "whoami", "id", "pwd", "uname", "set", "export", "cd"}
)  # fmt: skip

#: One token of a script: a comment, an operator, or a word with its quotes inside it.
TOKEN = re.compile(
    r"""
      (?P<comment>\#[^\n]*)                 # where a word could start, to the end of the line
    | (?P<op>&&|\|\||;;|[;&|()\n])          # separators and grouping
    | (?P<word>(?:
          [<>]&|&>                          # a redirection to a descriptor: 2>&1, &>file
        | '[^']*'                           # single quotes: literal
        | "(?:[^"\\]|\\.)*"                 # double quotes, with escapes
        | \\.                               # an escaped character
        | \$\((?:[^()]|\([^()]*\))*\)       # $(…) and $((…)), one level of nesting
        | `[^`]*`                           # `…`
        | [^\s;&|()'"\\`]                   # any other character
      )+)
    | [ \t\r]+
    """,
    re.X | re.S,
)
#: The quotes and escapes a word loses once read.
QUOTING = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.S)
#: A `sleep` operand, as busybox and coreutils read it: seconds, or with a unit.
DURATION = re.compile(r"(\d+(?:\.\d+)?|\.\d+)([smhd]?)")
SLEEP_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
#: `tail`'s following options: -f, -F, with others in one word (-fn0), --follow[=…].
FOLLOWS = re.compile(r"-[^-]*[fF]|--follow")
#: A redirection's operator (2>&1, >/dev/null begin with one; a bare `>` takes the next word).
REDIRECT = re.compile(r"\d*(>>?|<|&>)")
#: A redirection of standard input (`< file`, `<<EOF`, `<<< word`): not the container's.
INPUT = re.compile(r"0?<")

#: Reserved words that open a compound command, and those that close one.
OPENS = frozenset({"if", "while", "until", "for", "select", "case", "{"})
CLOSES = frozenset({"fi", "done", "esac", "}"})
#: Reserved words after which a command starts (so the next word may be reserved too).
LEADS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "{", "time"})
#: Operators that end a top-level statement.
ENDS = frozenset({";", "\n", "&&", "||", "&", "|", ";;"})


@dataclass(frozen=True)
class Outcome:
    """How a command ends, as far as reading it tells."""

    #: False: it runs until stopped (`sleep infinity`, `tail -f`, an endless loop).
    ends: bool = True
    #: Every statement it may run is an understood word that ends: it surely exits.
    certain: bool = False
    #: Kubelet seconds its `sleep`s add up to.
    seconds: float = 0.0
    exit_code: int = 0


#: A program the kubelet cannot read: assumed to succeed, not known to end.
UNKNOWN = Outcome()


@dataclass(frozen=True)
class Token:
    text: str  # a word without its quotes, or the operator
    word: bool
    #: A reserved word where the shell reads one (`done` ends a loop, `echo done` does not).
    keyword: bool = False
    #: The compound commands it is inside.
    depth: int = 0
    #: It substitutes a command's output ($(…), `…`): what it says is not known.
    substitutes: bool = False


@dataclass(frozen=True)
class Statement:
    tokens: list[Token]
    before: str  # the operator that joins it to the previous one ("" for the first)
    after: str  # the operator that follows it ("" for the last)

    @property
    def compound(self) -> bool:
        return self.tokens[0].keyword or self.tokens[0].text == "("


@dataclass(frozen=True)
class Simple:
    """What one simple command does: its exit status (None: not known), its sleep, whether
    it ends, whether it leaves the script (`exit`), and whether it is understood."""

    status: int | None = None
    seconds: float = 0.0
    ends: bool = True
    exits: bool = False
    known: bool = False


def read(words: Sequence[str], *, stdin: bool = False) -> Outcome:
    """How the command `words` (a container's command and args) ends; `stdin`: its
    standard input stays open (`stdin: true` or `tty: true`), else it is empty."""
    if not words:
        return UNKNOWN
    script, errexit = _script(words)
    if script is None:
        return _statements_outcome([Statement(_plain(words), "", "")], errexit=False, stdin=stdin)
    tokens = _tokens(script)
    if tokens is None:  # an unclosed quote: a syntax error we do not guess the code of
        return UNKNOWN
    return _statements_outcome(_statements(tokens), errexit=errexit, stdin=stdin)


def _script(words: Sequence[str]) -> tuple[str | None, bool]:
    """(the script a shell is given with -c, whether -e is set); (None, False) without one."""
    if not words or words[0].rsplit("/", 1)[-1] not in SHELLS:
        return None, False
    errexit = named = False  # named: this word is an option `-o` names (`-o pipefail`)
    for index, word in enumerate(words[1:], start=1):
        if named:
            errexit, named = errexit or word == "errexit", False
            continue
        if not word.startswith(("-", "+")) or word == "--":
            break
        short = word[1:] if not word.startswith("--") else ""  # -ec, not --noprofile
        errexit = errexit or (word[0] == "-" and "e" in short)
        named = "o" in short
        if "c" in short and index + 1 < len(words):
            return words[index + 1], errexit
    return None, False


def _plain(words: Sequence[str]) -> list[Token]:
    """A command run without a shell: its words as they are, `;` and quotes included."""
    return [Token(str(word), word=True) for word in words]


def _tokens(script: str) -> list[Token] | None:
    """The script's tokens, each with the depth of compound commands it is in."""
    text = script.replace("\\\n", "")  # a line continued
    tokens: list[Token] = []
    inside: list[str] = []  # the compound commands open, innermost last
    command_starts = True
    heredocs: list[tuple[str, bool]] = []  # here-documents whose bodies start next line
    pos = 0
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if match is None:
            return None
        pos = match.end()
        if match["op"] == "\n" and heredocs:
            pos = _past_heredocs(text, pos, heredocs)
            heredocs = []
        if match["op"]:
            op = match["op"]
            innermost = inside[-1] if inside else ""
            if op == ")" and innermost == "(":
                inside.pop()
            tokens.append(Token(op, word=False, depth=len(inside)))
            if op == "(" and innermost != "case":  # in a `case`, `a)` is a pattern
                inside.append("(")
            command_starts = True
        elif match["word"]:
            raw = match["word"]
            if heredocs and not heredocs[-1][0]:  # after a bare `<<`: its delimiter
                heredocs[-1] = (QUOTING.sub(_unquote, raw), heredocs[-1][1])
            elif (here := _heredoc(raw)) is not None:
                heredocs.append(here)
            text_of = QUOTING.sub(_unquote, raw)
            reserved = command_starts and raw in OPENS | CLOSES | LEADS
            if reserved and raw in CLOSES and inside:
                inside.pop()
            tokens.append(
                Token(text_of, word=True, keyword=reserved, depth=len(inside),
                      substitutes="$(" in raw or "`" in raw)
            )  # fmt: skip
            if reserved and raw in OPENS:
                inside.append(raw)
            command_starts = reserved and raw in LEADS
    return tokens


#: A here-document's operator in a word (`<<EOF`, `<<-'EOF'`, a bare `<<`), not a here-string.
HEREDOC = re.compile(r"(?<!<)<<(-?)(?!<)(.*)", re.S)


def _heredoc(raw: str) -> tuple[str, bool] | None:
    """(its delimiter, "" when the next word gives it; whether tabs before it are stripped)
    of the here-document a word opens, if any: `cat <<EOF` takes the lines after the command
    as cat's input, up to a line of `EOF`, never as statements."""
    # A `<<` in quotes is text; one in `$(…)` has its lines inside it.
    bare = SUBSTITUTION.sub(_blank, QUOTING.sub(_blank, raw))
    found = HEREDOC.search(bare)
    if found is None:
        return None
    return QUOTING.sub(_unquote, raw[found.start(2) :]), bool(found[1])


#: A command substitution in a word: `$(…)` (to its last `)`), or `…`.
SUBSTITUTION = re.compile(r"\$\(.*\)|`[^`]*`", re.S)


def _blank(match: re.Match[str]) -> str:
    return "_" * len(match[0])


def _past_heredocs(text: str, pos: int, heredocs: list[tuple[str, bool]]) -> int:
    """Where the script goes on after the bodies of `heredocs`, which start at `pos`: past
    the line of each one's delimiter (the script's end when one has none, as sh reads it)."""
    for delimiter, strip_tabs in heredocs:
        while pos < len(text):
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            line = text[pos:end]
            pos = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return min(pos, len(text))


def _unquote(match: re.Match[str]) -> str:
    if match[1] is not None:
        return match[1]
    if match[2] is not None:
        return re.sub(r'\\([$`"\\])', r"\1", match[2])
    return match[3]


def _statements(tokens: list[Token]) -> list[Statement]:
    """The top-level statements and the operators between them (blank lines dropped)."""
    out: list[Statement] = []
    current: list[Token] = []
    before = ""
    for token in [*tokens, Token("", word=False)]:
        if token.word or token.depth > 0 or token.text not in ENDS | {""}:
            current.append(token)
            continue
        if current:
            out.append(Statement(current, before, token.text))
            before, current = token.text, []
        elif token.text in ("&&", "||", "|"):
            before = token.text  # `a &&` then a new line: the next statement still depends
    return out


def _statements_outcome(statements: list[Statement], *, errexit: bool, stdin: bool) -> Outcome:
    """Run the top-level statements on paper, in order."""
    status: int | None = 0  # the last statement's exit status; None: not known
    certain, seconds = True, 0.0
    #: When each command it started in the background ends (None: never), until a `wait`.
    background_ends: list[float | None] = []
    for statement in statements:
        piped = "|" in (statement.before, statement.after)
        background = statement.after == "&"
        skipped = (statement.before == "&&" and status != 0) or (
            statement.before == "||" and status == 0
        )
        if skipped and status is not None:
            continue  # surely not run: `false && …`, `true || …`
        # Not counted when it runs only on a condition: `check && exit 1` (the check not
        # known to succeed), `cmd || exit 1` (whatever cmd is).
        reached = not skipped and statement.before != "||"
        read_one = _compound if statement.compound else _simple
        did = read_one(statement.tokens, stdin=stdin and statement.before != "|")
        if [t.text for t in statement.tokens if t.word][:1] == ["wait"]:
            # Until what it started in the background ends: `sleep infinity & wait` never.
            ends = all(end is not None for end in background_ends)
            last = max((end for end in background_ends if end is not None), default=seconds)
            did = Simple(status=0, seconds=max(last - seconds, 0.0), ends=ends, known=True)
            background_ends = []
        if not did.ends and not background:
            return Outcome(ends=False)
        certain = certain and did.known and did.ends and not (piped or background)
        if background:
            background_ends.append(seconds + did.seconds if did.ends else None)
            status = 0
            continue
        seconds += did.seconds
        if not reached or piped:
            status = None
            continue
        if did.exits:
            code = did.status if did.status is not None else status
            return Outcome(certain=certain, seconds=seconds, exit_code=code or 0)
        status = did.status
        if errexit and status not in (0, None) and statement.after not in ("&&", "||"):
            return Outcome(certain=certain, seconds=seconds, exit_code=status or 0)
        errexit = errexit or _sets_errexit(statement.tokens)
    return Outcome(certain=certain, seconds=seconds, exit_code=status or 0)


def _sets_errexit(tokens: list[Token]) -> bool:
    words = [t.text for t in tokens]
    return words[:1] == ["set"] and any(
        (w.startswith("-") and "e" in w[1:]) or w == "errexit" for w in words[1:]
    )


def _simple(tokens: list[Token], *, stdin: bool) -> Simple:
    """What one simple command does (`stdin`: its standard input stays open)."""
    words = [t.text for t in tokens if t.word]
    while words and (words[0] == "exec" or re.fullmatch(r"[A-Za-z_]\w*=.*", words[0], re.S)):
        words = words[1:]  # `exec sleep infinity`, `A=1 cmd`: the command is what follows
    if not words:
        return Simple(status=0, known=True)
    name, args = words[0].rsplit("/", 1)[-1], _arguments(words[1:])
    understood = not any(t.substitutes for t in tokens)
    if name == "sleep":
        if any(a in ("inf", "infinity") for a in args):
            return Simple(ends=False)
        durations = [DURATION.fullmatch(a) for a in args]
        if args and all(durations):
            seconds = sum(float(m[1]) * SLEEP_UNITS[m[2]] for m in durations if m)
            return Simple(status=0, seconds=seconds, known=understood)
        return Simple()
    if name == "tail" and any(FOLLOWS.match(a) for a in args):
        return Simple(ends=False)
    if name == "exit":
        code = int(args[0]) % 256 if args and re.fullmatch(r"-?\d+", args[0]) else None
        return Simple(status=code, exits=True, known=True)
    if name in ("true", ":"):
        return Simple(status=0, known=understood)
    if name == "false":
        return Simple(status=1, known=understood)
    given_input = any(INPUT.match(word) for word in words[1:])  # `cat <<EOF`, `sh < script`
    if name in READERS and all(a.startswith("-") for a in args) and not given_input:
        # Reads the container's standard input: empty, it ends at once, as a shell at its
        # end does; kept open, it waits on it.
        if stdin:
            return Simple(ends=False)
        code, options = REFUSING_READERS.get(name, (0, frozenset()))
        refused = bool(options) and not options & set(args)
        return Simple(status=code if refused else 0, known=understood)
    if name in ("env", "printenv") and any("=" not in a and not a.startswith("-") for a in args):
        return Simple()  # runs a program
    if name in KNOWN:
        return Simple(status=0, known=understood)
    return Simple()


def _arguments(words: list[str]) -> list[str]:
    """A command's arguments without its redirections (`> /dev/null`, `2>&1`, `>>log`)."""
    out: list[str] = []
    target = False  # the word after a bare `>` is where it goes
    for word in words:
        if target:
            target = False
        elif REDIRECT.fullmatch(word):
            target = True
        elif not REDIRECT.match(word):
            out.append(word)
    return out


def _compound(tokens: list[Token], *, stdin: bool) -> Simple:
    """A compound command, read only for what it surely implies: the sleeps in it, and
    whether a loop in it, or a command in it, never ends (its status is not known)."""
    inner = [_simple(command, stdin=stdin) for command in _simple_commands(tokens)]
    endless = any(not s.ends for s in inner) or any(
        _endless(*loop, stdin=stdin) for loop in _loops(tokens)
    )
    return Simple(seconds=sum(s.seconds for s in inner), ends=not endless)


def _simple_commands(tokens: list[Token]) -> Iterator[list[Token]]:
    """Every simple command inside, at any depth: the words between operators and keywords."""
    current: list[Token] = []
    for token in tokens:
        if token.word and not token.keyword:
            current.append(token)
        elif current:
            yield current
            current = []
    if current:
        yield current


def _loops(tokens: list[Token]) -> Iterator[tuple[str, list[Token], list[Token]]]:
    """Every `while` / `until` loop inside: (its keyword, its condition, its body)."""
    for start, token in enumerate(tokens):
        if token.keyword and token.text in ("while", "until"):
            do = _keyword(tokens, "do", start, token.depth + 1)
            done = _keyword(tokens, "done", do, token.depth)
            if do < len(tokens):
                yield token.text, tokens[start + 1 : do], tokens[do + 1 : done]


def _keyword(tokens: list[Token], word: str, after: int, depth: int) -> int:
    """Where reserved `word` next stands at `depth` after index `after` (the end if nowhere)."""
    found = (
        i
        for i in range(after + 1, len(tokens))
        if tokens[i].keyword and tokens[i].text == word and tokens[i].depth == depth
    )
    return next(found, len(tokens))


def _endless(keyword: str, condition: list[Token], body: list[Token], *, stdin: bool) -> bool:
    """A loop whose condition never ends it (`while true`, `while :`, `while sleep 5`,
    `until false`) and that nothing in it leaves (`break`, `exit`, `return`)."""
    if any(not t.word and t.text not in (";", "\n") for t in condition):
        return False
    test = _simple([t for t in condition if t.word], stdin=stdin)
    forever = test.known and test.ends and test.status == (0 if keyword == "while" else 1)
    return forever and not any(t.word and t.text in ("break", "exit", "return") for t in body)
