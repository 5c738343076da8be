"""bounded-check: Z3 proves pooled uncapacitated misses = distinct openings for all short lists."""

from __future__ import annotations

import json
from itertools import product

from pyverify.certify.bounded import prove
from pyverify.cli import main


def test_small_bound_is_proved():
    result = prove(5, 4)
    assert result.result == "unsat" and result.counterexample is None


def test_encoding_is_not_vacuous():
    # The false statement misses = distinct + 1 must get a counterexample, and it must be one.
    result = prove(4, 3, offset=1)
    assert result.result == "sat"
    example = result.counterexample
    seen, misses = set(), 0
    for opening in example:
        misses += opening not in seen
        seen.add(opening)
    assert misses != len(set(example)) + 1


def test_bound_agrees_with_enumeration():
    # What Z3 proves at N = 4, K = 3, checked here by brute force over all 1 + 3 + 9 + 27 + 81 lists.
    for length in range(5):
        for lst in product(range(3), repeat=length):
            seen, misses = set(), 0
            for opening in lst:
                misses += opening not in seen
                seen.add(opening)
            assert misses == len(set(lst))
    assert prove(4, 3).result == "unsat"


def test_command(capsys):
    status = main(["bounded-check", "-n", "5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert (
        out["results"][0]["proved"]
        and out["results"][0]["max_length"] == 5
        and out["results"][0]["openings"] == 5
    )


def test_command_search_and_text(capsys):
    status = main(["bounded-check", "-n", "3", "--search", "1"])
    out = capsys.readouterr().out
    assert status == 0
    assert "largest bound proved: N = " in out and "nothing more" in out
