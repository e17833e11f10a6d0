"""A trial's result as the lab spells it: the one table of checker/trial_result.h (word,
letter, colour, fill, meaning), read from `locklab list --json` ("results"). The reports show
the result a run, a matrix or a hunt recorded (results.json "result" / "result_letter",
matrix.json's cells and trial records) and never derive it themselves.

    results.word("L")      -> "stuck"
    results.colour("V")    -> "#c8102e"
    results.of(results_json) -> "S", "V", "L", "?" (what results.json says; "?" when it says nothing)

No binary, or one that does not answer with the table, is ToolError (exit 69), as for the judge.
"""

import functools

from .history import ToolError


@functools.lru_cache(maxsize=4)
def _table_of(binary):
    from .runfiles import lab_list
    rows = lab_list(binary).get("results")
    keys = ("word", "letter", "colour", "fill", "meaning")
    if not isinstance(rows, list) or not rows or not all(
            isinstance(r, dict) and all(isinstance(r.get(k), str) for k in keys) for r in rows):
        raise ToolError(f"`{binary} list --json`: no results table (a binary older than this report?)")
    return tuple(dict((k, r[k]) for k in keys) for r in rows)


def table():
    """Every result, in the lab's order: dicts with word, letter, colour, fill, meaning."""
    from .runfiles import locklab_binary   # here: runfiles is the heavier import
    return _table_of(locklab_binary())


def _by_letter(letter):
    for r in table():
        if r["letter"] == letter:
            return r
    return next(r for r in table() if r["letter"] == "?")


def letters():
    return tuple(r["letter"] for r in table())


def word(letter):
    return _by_letter(letter)["word"]


def colour(letter):
    return _by_letter(letter)["colour"]


def fill(letter):
    return _by_letter(letter)["fill"]


def meaning(letter):
    return _by_letter(letter)["meaning"]


def css_class(letter):
    """The page class of a result's cell: "c-" and its word ("c-not-run", "c-na")."""
    return "c-" + "".join(ch if ch.isalnum() else "-" for ch in word(letter)).strip("-").replace("--", "-")


def css():
    """Every result's cell colours, from the table: background its fill, letter its colour."""
    return "".join(f".{css_class(r['letter'])}{{background:{r['fill']}}}"
                   f".{css_class(r['letter'])} .letter{{color:{r['colour']}}}" for r in table())


def of(results):
    """The letter a results.json (or `check --json`) recorded: "?" when it records none."""
    if not isinstance(results, dict):
        return "?"
    letter = results.get("result_letter")
    return letter if isinstance(letter, str) and letter in letters() else "?"
