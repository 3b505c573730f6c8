"""The `flowmem` command's arguments: short help, `--help-all`, one-line usage errors.

Every setting of config.Config is a flag, `--<name with dashes>`, with the help text
declared beside the field. A command takes the settings of the groups its record names
(Command.groups), but its `--help` shows only the few a user of it reaches for
(Command.short), one line each, so it fits a screen; `--help-all` shows every flag the
command takes with its whole help text (the ranking weights only there). `flowmem
settings` prints them all as the Markdown tables docs/operations.md's Settings section
holds a copy of (tests/test_cli.py compares the two).

argparse, left alone, answers a wrong flag with the whole usage (dozens of lines) and
takes `--api-key abc` for `--api-key-file abc` (a prefix of a longer flag): Parser
allows no abbreviations and prints one line, `flowmem serve: error: ...`, with a
near flag if there is one and where to look.

A flag whose argument the Python API, HTTP or MCP names otherwise is taken under that
name too (ALIASES): `flowmem search --limit 3` as `m.search(..., limit=3)`, `--user-id`
as `user_id`. Help shows the flag once and names the other spelling beside it.
"""
from __future__ import annotations

import argparse
import copy
import difflib
import textwrap
from typing import Any, Callable, List, NoReturn, Sequence

from .. import config as config_module
from ..errors import InvalidField
from ..storage.settings import ViewSettings, flag_value
from ..validation import integer_text

# A shorter line for a setting whose declared help is long, in the short --help of every command.
SHORT_TEXT = {
    "db": "the SQLite database file",
    "allowed_hosts": "Host names answered besides localhost and IP literals",
    "api_key_file": "a file whose first line is the API key",
    "api_key": "the API key itself (shows in `ps`: prefer --api-key-file)",
    "workers": "threads that answer requests",
    "stem": "index (and read questions as) word stems",
}


# A command's flag -> the other names its argument has (Python, HTTP, MCP), taken as flags too: a user
# types the name they know (`search --limit 3` was "unrecognized arguments").
ALIASES = {"--top-k": ("--limit",), "--user": ("--user-id",), "--session": ("--session-id",)}


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that takes no abbreviated flags and reports a usage error in one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        """argparse's add_argument(), a flag of ALIASES taking its other names as well (help says so)."""
        aliases = [alias for name in names for alias in ALIASES.get(name, ()) if alias not in names]
        if aliases and kwargs.get("help") not in (None, argparse.SUPPRESS):
            kwargs["help"] = "%s; also %s" % (kwargs["help"], ", ".join(aliases))
        return super().add_argument(*names, *aliases, **kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse lists every choice and names none; a command or choice mistyped gets the nearest.
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
        what = "unknown command %r" % value if isinstance(action, argparse._SubParsersAction) else (
            "argument %s: unknown choice %r" % (argparse._get_action_name(action), value))
        hint = "; did you mean %r?" % close[0] if close else "; choose from %s" % ", ".join(choices)
        raise argparse.ArgumentError(None, what + hint)

    def error(self, message: str) -> NoReturn:
        near = _near_flag(self, message)
        hint = "did you mean %s? " % near if near else ""
        self.exit(2, "%s: error: %s (%ssee %s --help)\n" % (self.prog, message, hint, self.prog))


class Formatter(argparse.HelpFormatter):
    """Help with each option's text beside it, on one line where it fits in 100 columns."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=100)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        # argparse measures the commands' names without the indent they are printed at, so the
        # longest (delete-message) got a line of its own with its help below it.
        subactions = getattr(action, "_get_subactions", None)
        if action.help is not argparse.SUPPRESS and subactions is not None:
            widest = max((len(self._format_action_invocation(a)) for a in subactions()), default=0)
            self._action_max_length = max(self._action_max_length,
                                          widest + self._current_indent + self._indent_increment)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        # An alias is named in the flag's help ("; also --limit"), not beside the flag: help stays one line.
        aliases = {alias for name in action.option_strings for alias in ALIASES.get(name, ())}
        if aliases:
            action = copy.copy(action)
            action.option_strings = [name for name in action.option_strings if name not in aliases]
        return super()._format_action_invocation(action)

    def _split_lines(self, text: str, width: int) -> List[str]:
        # argparse's own wrapping breaks "comma-separated" after its hyphen.
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _near_flag(parser: argparse.ArgumentParser, message: str) -> str:
    """The parser's flag nearest to the one an "unrecognized arguments" message names, or ""."""
    if not message.startswith("unrecognized arguments:"):
        return ""
    words = [w.split("=", 1)[0] for w in message.split(":", 1)[1].split() if w.startswith("--")]
    flags = [flag for action in parser._actions for flag in action.option_strings]
    for word in words:
        close = difflib.get_close_matches(word, flags, n=1, cutoff=0.75)
        if close:
            return close[0]
    return ""


def integer(text: str) -> int:
    """A command's integer argument (`--top-k`, `--timestamp`), read as a client's number is
    (validation.integer_text(): ASCII digits, at most 19): int() alone takes `١٢`, `1_000` and
    thousands of digits, and argparse would echo every one of them in its error."""
    try:
        value = integer_text(text, "it")
    except InvalidField as e:  # more digits than any number flowmem takes
        raise argparse.ArgumentTypeError(e.reason[len("it "):]) from None
    if isinstance(value, int):
        return value
    raise argparse.ArgumentTypeError("must be an integer in ASCII digits, got %s" % _shown(text))


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "... (%d characters)" % len(text)


def flag_name(name: str) -> str:
    """The command-line flag of setting `name`: `--<name with dashes>`."""
    return "--" + name.replace("_", "-")


def metavar(name: str) -> str:
    """What a setting's flag takes, as help shows it: N, SECONDS, X, 1|0, or the value's name."""
    kind = config_module.field_type(name)
    if name.endswith("_s"):
        return "SECONDS"
    if kind is int:
        return "N"
    if kind is float:
        return "X"
    if kind is config_module.to_bool:
        return "1|0"
    named = {"db": "PATH", "api_key_file": "FILE", "api_key": "KEY", "synchronous": "MODE"}
    return named.get(name, name.split("_")[-1].upper())


def default_text(setting: config_module.Setting, value: Callable[[str], str] = str) -> str:
    """A setting's default as --help and the table say it, each value shown by `value`.

    An index setting's default is the database's own; a new database's is ViewSettings'.
    """
    if setting.group == "index":
        return "as the database was built (a new one: %s)" % value(flag_value(getattr(ViewSettings(), setting.name)))
    if setting.default is None or setting.default == "":
        return "none"
    return value(flag_value(setting.default))


def settings_flags(parser: argparse.ArgumentParser, groups: Sequence[str], short: Sequence[str],
                   show_all: bool) -> None:
    """A flag for every setting of `groups`; help for those `short` names, or for all if `show_all`."""
    for group, title in config_module.GROUPS.items():
        if group not in groups:
            continue
        shown = [s for s in config_module.settings() if s.group == group and (show_all or s.name in short)]
        arguments = parser.add_argument_group("settings: " + title) if show_all and shown else parser
        for setting in config_module.settings():
            if setting.group != group:
                continue
            text = argparse.SUPPRESS
            if setting in shown:
                text = _help(setting, show_all).replace("%", "%%")  # argparse expands %-formats
            arguments.add_argument(flag_name(setting.name), dest=setting.name,
                                   type=config_module.field_type(setting.name), default=None,
                                   metavar=metavar(setting.name), help=text)
    hidden = sum(1 for s in config_module.settings() if s.group in groups and s.name not in short)
    if show_all:
        parser.epilog = ("Each setting is also read from FLOWMEM_<NAME> (e.g. FLOWMEM_DB); a flag wins. "
                         "Yes/no settings take 1/0, yes/no, true/false or on/off.")
    parser.add_argument("--help-all", action="help", help="this help" if show_all or not hidden else
                        "also the %d other settings it takes" % hidden)


def _help(setting: config_module.Setting, whole: bool) -> str:
    """A setting's help line: its declared help (or SHORT_TEXT's, unless `whole`) and its default."""
    default = default_text(setting)
    if whole:
        return "%s (default: %s)" % (setting.help, default)
    text = SHORT_TEXT.get(setting.name, setting.help)
    if setting.group == "index":
        return "%s (a new database: %s)" % (text, flag_value(getattr(ViewSettings(), setting.name)))
    return text if default == "none" else "%s (default: %s)" % (text, default)


def wants_all(argv: Sequence[str]) -> bool:
    """Whether `argv` asks for every flag's help: `--help-all` before any `--`."""
    args = list(argv)
    return "--help-all" in (args[:args.index("--")] if "--" in args else args)


def _cell(text: str) -> str:
    # A | would end the cell and a < could open an HTML tag in Markdown.
    return text.replace("|", "\\|").replace("<", "&lt;")


def settings_table() -> str:
    """Every setting as Markdown: per group of config.GROUPS, a table of flag, variable, default and help.

    `flowmem settings` prints it; docs/operations.md's Settings section holds a copy, which
    tests/test_cli.py checks is identical.
    """
    lines: List[str] = []
    for group, title in config_module.GROUPS.items():
        lines += ["", "**%s%s**" % (title[0].upper(), title[1:]), "",
                  "| flag | variable | default | what |", "|---|---|---|---|"]
        for setting in config_module.settings():
            if setting.group == group:
                default = default_text(setting, lambda text: "`%s`" % text)
                lines.append("| `%s` | `%s` | %s | %s |" % (flag_name(setting.name), setting.variable, default,
                                                              _cell(setting.help)))
    return "\n".join(lines[1:]) + "\n"
