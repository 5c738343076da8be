"""Naming a request as its input file names it: ``line 2.input_length``, not
``requests[1].input_tokens``.

Some problems with a request show only once the input is read: a prompt too
short for its blocks (:func:`pyverify.sim.tokens.short_prompt_error`), a
timestamp that a timed replay needs. Those checks see the instance model, and
raise a :class:`~pyverify.errors.RequestError` naming the request by its index
and the field by the model's name. :func:`relocated` turns that into the words
of the file the user gave: the line (or the Parquet or CSV row) the request
came from and the field as that format writes it.

The lines come from the readers themselves: while
:func:`pyverify.inputs.records.recording` is on,
every :class:`~pyverify.inputs.records.TraceBuilder` notes the line of each
request it keeps (a token log leaves short requests out, a KV-event log makes
requests from events: counting records would not do). :func:`pyverify.inputs.load.load_described`
records every read; an input read as arrays (:mod:`pyverify.inputs.columnar`)
is read once more, per record, on the way to the error.
"""

from __future__ import annotations

from array import array

from pyverify.errors import RequestError, UserError, located
from pyverify.inputs.records import _READ


def relocated(error: RequestError) -> UserError:
    """``error`` in the words of the file it is about (module docstring); as it was when the file
    is an instance (whose words these are), or cannot be read again."""
    path = str(error.path)
    entry = _READ.get(path) or _read_again(path, error.index)
    if entry is None:
        return error
    from pyverify.inputs.load import FORMATS

    key, lines = entry
    fmt = next((fmt for fmt in FORMATS if fmt.key == key), None)
    if fmt is None or fmt.fields_as_written is None:
        return error
    if fmt.key in ("parquet", "csv"):
        where = f"row {error.index + 1}"
    elif error.index < len(lines):
        where = f"line {lines[error.index]}"
    else:
        return error
    reason = error.reason
    if error.field:
        name, bracket, position = error.field.partition("[")
        written = fmt.fields_as_written.get(name, name)
        if written is None:
            reason = f"{reason}; this {fmt.title} gives no {name} pyverify reads"
        else:
            where += f".{written}{bracket}{position}"
    return located(path, where, reason)


#: The formats with one request per non-blank line, whatever the line holds.
LINE_PER_REQUEST = (
    "mooncake-jsonl",
    "kvcache-simulator-jsonl",
    "qwen-bailian-jsonl",
    "ragpulse-jsonl",
    "lmcache-jsonl",
)


def _read_again(path: str, index: int) -> tuple[str, array] | None:
    """The lines of the input's requests up to ``index`` (it was read as arrays, so none were
    noted), or ``None`` when it cannot be read. A format of one request per non-blank line is
    counted, not parsed: the error on a big trace comes at once; any other is read per record."""
    from pyverify.inputs.detect import read_head
    from pyverify.inputs.load import detect_format, load_described
    from pyverify.inputs.records import ImportOptions
    from pyverify.inputs.stream import open_source

    try:
        with open_source(path) as source:
            key = detect_format(read_head(source), source.display).key
        if key in ("parquet", "csv"):
            return key, array("q")  # named by row
        if key in LINE_PER_REQUEST:
            lines = array("q")
            with open_source(path) as source:
                for number, text in enumerate(source.handle, 1):
                    if text.strip():
                        lines.append(number)
                        if len(lines) > index:
                            break
            return key, lines
        load_described(path, ImportOptions(allow_unsorted=True, warn=lambda message: None))
    except (UserError, OSError):
        return None
    return _READ.get(path)


__all__ = ["relocated"]
