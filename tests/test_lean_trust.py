"""The pieces of pyverify/lean/trust.py: option allowlist, comment blanking,
hypotheses of a printed statement, and the positive-example rule."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pyverify.lean import catalog, runner, trust

REPO = Path(__file__).resolve().parents[1]


def test_options_allowlist() -> None:
    assert trust.option_refusal("genSizeOf") is None
    assert trust.option_refusal("pp.all") is None
    assert "debug option" in trust.option_refusal("debug.skipKernelTC")
    assert "not on the allowlist" in trust.option_refusal("backward.isDefEq.lazyWhnfCore")


def test_set_option_in_comments_and_strings_is_not_one() -> None:
    text = '-- set_option debug.skipKernelTC true\n/- set_option debug.x true -/\ndef s := "set_option debug.y"\n'
    assert trust.option_problems(text) == []
    text += "set_option debug.skipKernelTC true in\ntheorem t : True := True.intro\n"
    assert trust.option_problems(text) == [(4, trust.option_refusal("debug.skipKernelTC"))]


def test_blanking_keeps_line_numbers() -> None:
    text = "a\n/- b\n c -/\nd -- e\n"
    blanked = trust.blank_comments_and_strings(text)
    assert blanked.count("\n") == text.count("\n")
    assert "b" not in blanked and "e" not in blanked and "d" in blanked


def test_premises_of_printed_statements() -> None:
    assert trust.premises("∀ (requests : List Natural), Eq (pooled_misses requests) (distinct_count requests)") == []
    assert trust.premises(
        "∀ (fleet : Natural) (requests : List (Prod Natural Natural)), hosts_below fleet requests → "
        "Eq (per_host_misses requests) (sum_below fleet fun host => distinct_count (openings_of host requests))"
    ) == ["hosts_below fleet requests"]
    assert trust.premises("∀ (a : T), P a → ∀ (b : U), (Q a b → R) → S") == ["P a", "(Q a b → R)"]
    assert trust.head("(Q a b → R)") == "Q"


def test_candidate_names_skip_syntax_and_universes() -> None:
    printed = trust.Printed("f", "def", "def f.{u} : Natural → List.{u} Natural :=\nfun (n : Natural) => @List.nil.{u} Natural")
    assert trust.candidate_names(printed) == {"Natural", "List", "List.nil", "n"}  # n: Lean says it is no constant
    shadowed = trust.Printed("g", "def", "def g : Natural → Natural :=\nfun (above : Natural) => _root_.above above")
    assert "above" in trust.candidate_names(shadowed)


def _with_examples(monkeypatch: pytest.MonkeyPatch, name: str, examples) -> None:
    specs = tuple(dataclasses.replace(s, examples=examples) if s.name == name else s for s in catalog.THEOREMS)
    monkeypatch.setattr(catalog, "THEOREMS", specs)


def test_a_hypothesis_without_a_positive_example_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_examples(monkeypatch, "pooled_block_misses_eq_distinct", ())
    result = runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert result.failures[0] == (
        "registered theorem pooled_block_misses_eq_distinct: hypothesis `prefix_closed chains` has no positive "
        "example (name one in the catalog, proved in PrefixPool.Examples)"
    )


def test_an_example_of_another_predicate_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_examples(monkeypatch, "demand_misses_ge_distinct", (("demand_valid", "tree_chains_prefix_closed"),))
    result = runner.check(REPO / "lean", backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert "its example tree_chains_prefix_closed proves `prefix_closed tree_chains`, not `demand_valid`" in result.failures[0]
