"""The pieces of pyverify/lean/trust.py: option allowlist, comment blanking,
hypotheses of a printed statement, and the positive-example rule."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pyverify.lean import catalog, runner, sources, trust

REPO = Path(__file__).resolve().parents[1]


def test_options_allowlist() -> None:
    assert trust.option_refusal("genSizeOf") is None
    assert trust.option_refusal("pp.all") is None
    assert "debug option" in trust.option_refusal("debug.skipKernelTC")
    assert "not on the allowlist" in trust.option_refusal("backward.isDefEq.lazyWhnfCore")


def test_set_option_in_comments_is_not_one() -> None:
    text = "-- set_option debug.skipKernelTC true\n/- set_option debug.x true -/\n/- /- nested -/ set_option debug.z true -/\n"
    assert trust.option_problems(text) == []
    text += "set_option debug.skipKernelTC true in\ntheorem t : True := True.intro\n"
    assert trust.option_problems(text) == [(4, trust.option_refusal("debug.skipKernelTC"))]


def test_an_option_in_a_string_is_seen_and_the_string_refused() -> None:
    """Strings are not interpreted (a quote is how code was hidden from the old
    scanner): the option inside is reported, and the string itself refused."""
    text = 'def s := "set_option debug.y"\n'
    assert trust.option_problems(text) == [(1, trust.option_refusal('debug.y"'))]
    assert any("string literals are refused" in reason for _, reason in sources.problems(text))


def test_blanking_keeps_line_numbers() -> None:
    text = "a\n/- b\n c -/\nd -- e\n"
    blanked, unclosed = sources.blank_comments(text)
    assert unclosed is None
    assert blanked.count("\n") == text.count("\n")
    assert "b" not in blanked and "e" not in blanked and "d" in blanked


def test_premises_of_printed_statements() -> None:
    assert (
        trust.premises(
            "∀ (requests : List Natural), Eq (pooled_misses requests) (distinct_count requests)"
        )
        == []
    )
    assert trust.premises(
        "∀ (fleet : Natural) (requests : List (Prod Natural Natural)), hosts_below fleet requests → "
        "Eq (per_host_misses requests) (sum_below fleet fun host => distinct_count (openings_of host requests))"
    ) == ["hosts_below fleet requests"]
    assert trust.premises("∀ (a : T), P a → ∀ (b : U), (Q a b → R) → S") == ["P a", "(Q a b → R)"]
    assert trust.head("(Q a b → R)") == "Q"


def _with_applies(monkeypatch: pytest.MonkeyPatch, name: str, applies) -> None:
    specs = tuple(
        dataclasses.replace(s, applies=applies) if s.name == name else s for s in catalog.THEOREMS
    )
    monkeypatch.setattr(catalog, "THEOREMS", specs)


def test_a_theorem_with_hypotheses_and_no_example_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_applies(monkeypatch, "pooled_block_misses_eq_distinct", None)
    result = runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert result.failures[0] == (
        "registered theorem pooled_block_misses_eq_distinct: its hypothesis `prefix_closed chains` (and every other) "
        "needs an example that instantiates the theorem on a concrete input: name a theorem of PrefixPool.Examples "
        "as `applies` in the catalog"
    )


def test_an_example_of_another_theorem_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_applies(
        monkeypatch, "demand_misses_ge_distinct", "pooled_block_misses_eq_distinct_applies"
    )
    result = runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert result.failures[0] == (
        "registered theorem demand_misses_ge_distinct: its example pooled_block_misses_eq_distinct_applies is not "
        "proved by applying demand_misses_ge_distinct (its proof starts with `pooled_block_misses_eq_distinct`), "
        "so it does not show the hypotheses hold together"
    )


def test_a_positive_example_of_one_hypothesis_is_no_longer_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The old rule (a proof of each premise kind) named `lru_run_valid` for
    `demand_misses_ge_distinct`; it proves the hypothesis but does not apply the theorem."""
    _with_applies(monkeypatch, "demand_misses_ge_distinct", "lru_run_valid")
    result = runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert (
        "its example lru_run_valid is not proved by applying demand_misses_ge_distinct"
        in result.failures[0]
    )
