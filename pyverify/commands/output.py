"""How the commands print: strict JSON for ``--json``, and text tables whose columns are aligned
so no two headers run together."""

from __future__ import annotations

import json

from pyverify.errors import UserError


def print_json(data: object) -> None:
    """Write ``--json`` output as strict JSON: no NaN or Infinity (Python's json writes both)."""
    try:
        text = json.dumps(data, indent=2, allow_nan=False)
    except ValueError:
        raise UserError(
            "the result holds a number that is not finite (NaN or infinity), which JSON "
            "cannot carry; nothing was written"
        ) from None
    print(text)


def aligned_table(columns: list[tuple[str, str, str]], rows: list[dict]) -> list[str]:
    """Lines of a right-aligned table, two spaces between columns, each as wide as its widest cell.

    ``columns`` holds ``(header, key, format)``; a missing or None value prints as '-'.
    """
    cells = [[header for header, _, _ in columns]]
    cells += [
        ["-" if row.get(key) is None else format(row[key], spec) for _, key, spec in columns]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return ["  ".join(cell.rjust(width) for cell, width in zip(line, widths)) for line in cells]


__all__ = ["aligned_table", "print_json"]
