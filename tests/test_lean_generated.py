"""lean/PrefixPool/Generated.lean holds kernel-checked examples whose values the
Python mirrors computed (scripts/gen_lean_examples.py). It must be exactly what
the script writes today, and the Lean check must refuse a value the Lean
definition does not compute."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from pyverify.lean import runner
from pyverify.sim import simulate

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"
GENERATED = LEAN / "PrefixPool" / "Generated.lean"


def load_script():
    spec = importlib.util.spec_from_file_location(
        "gen_lean_examples", REPO / "scripts" / "gen_lean_examples.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_module_is_up_to_date() -> None:
    assert GENERATED.read_text(encoding="utf-8") == load_script().render(), (
        "lean/PrefixPool/Generated.lean is out of date: run python scripts/gen_lean_examples.py"
    )


def test_generation_is_deterministic_and_covers_every_mirror() -> None:
    script = load_script()
    text = script.render()
    assert text == script.render()
    for lean_name in (
        "distinct_count",
        "pooled_misses",
        "per_host_misses",
        "distinct_pairs",
        "openings_of",
        "demand_misses",
        "pooled_block_misses",
        "distinct_blocks",
        "per_host_block_misses",
        "distinct_host_blocks",
        "prefix_misses",
        "lru_hits",
        "lru_cache",
        "mtf_stack",
        "since",
        "min_misses",
        "per_host_min",
        "lru_misses",
        "far_references",
        "prefix_lru_misses",
        "per_host_prefix_lru",
        "per_host_lru",
        "Natural.times",
        "forced_min_misses",
    ):
        assert f"({lean_name} " in text, lean_name
    assert len(re.findall(r"^example : .* := rfl$", text, re.M)) >= 30


@pytest.mark.parametrize(
    "lean_name, smallest_capacity",
    [
        ("lru_misses", 0),
        ("far_references", 0),
        ("min_misses", 0),
        ("forced_min_misses", 1),
        ("fifo_misses", 1),
    ],
)
def test_flat_counts_are_pinned_on_every_small_input(
    lean_name: str, smallest_capacity: int
) -> None:
    """Exhaustive, not a sample: every list over blocks 0..2 of length at most 3 (40 lists), at every
    capacity up to 2, has its kernel-checked example, with the value the Python twin computes."""
    script = load_script()
    from pyverify.lean import generated

    text = script.render()
    lists = generated.every_flat_list()
    assert len(lists) == 1 + 3 + 9 + 27 and len({tuple(xs) for xs in lists}) == len(lists)
    assert max(len(xs) for xs in lists) == 3 and {b for xs in lists for b in xs} == {0, 1, 2}
    values = {lhs: value for _, lhs, value in generated.exhaustive_examples()}
    for requests in lists:
        assert f"example : Eq (distinct_count {generated.nats(requests)}) " in text
        for capacity in range(smallest_capacity, 3):
            lhs = f"{lean_name} {generated.nat(capacity)} {generated.nats(requests)}"
            line = f"example : Eq ({lhs}) {generated.nat(values[lhs])} := rfl"
            assert line in text, line


def test_a_mirror_drifting_on_one_small_input_changes_the_generated_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A FIFO twin wrong on one input of three requests only, [2, 1, 0] with one block: the
    generated module changes (so the up-to-date check refuses it), whichever inputs a sample drew."""
    from pyverify.lean import mirror

    script = load_script()
    original = mirror.fifo_misses
    monkeypatch.setattr(
        mirror,
        "fifo_misses",
        lambda requests, capacity: (
            original(requests, capacity) + (list(requests) == [2, 1, 0] and capacity == 1)
        ),
    )
    assert script.render() != GENERATED.read_text(encoding="utf-8")


def test_a_python_mirror_that_drifts_changes_the_generated_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The values are the mirror's: a mirror off by one writes a different file
    (which the up-to-date test above would then refuse)."""
    script = load_script()
    original = simulate.distinct_count
    monkeypatch.setattr(simulate, "distinct_count", lambda chains: original(chains) + 1)
    assert script.render() != GENERATED.read_text(encoding="utf-8")


def test_a_value_the_lean_definition_does_not_compute_is_refused(tmp_path: Path) -> None:
    """What a drifting Lean definition looks like to the check: one generated
    value no longer what Lean computes; the module fails to build."""
    copy = tmp_path / "lean"
    shutil.copytree(LEAN, copy)
    path = copy / "PrefixPool" / "Generated.lean"
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(
        i for i, line in enumerate(lines) if line.startswith("example : Eq (pooled_block_misses")
    )
    value = int(re.search(r"gen_n(\d+) := rfl$", lines[at]).group(1))
    lines[at] = re.sub(r"gen_n\d+ := rfl$", f"gen_n{value + 1} := rfl", lines[at])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.check(copy, backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert result.failures[0].startswith(
        f"module PrefixPool.Generated (lean/PrefixPool/Generated.lean), line {at + 1}: error"
    )


def test_the_generated_module_is_required(tmp_path: Path) -> None:
    copy = tmp_path / "lean"
    shutil.copytree(LEAN, copy)
    (copy / "PrefixPool" / "Generated.lean").unlink()
    result = runner.check(copy, backend="wheel", emit=lambda line: None)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.Generated (PrefixPool/Generated.lean): missing"
    )


def test_the_generator_does_not_import_the_bridge() -> None:
    """bridge -> runner -> generated -> bridge was an import circle: the
    generator takes the trusted recount's MIN from where it lives."""
    import subprocess
    import sys

    probe = "import sys, pyverify.lean.generated; print('pyverify.lean.bridge' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


# --- every mirrored definition, on every input up to the stated size (issue 51, theorem 5) -----

#: Every Lean definition with a Python twin that takes requests, chains or a run; each must be
#: evaluated by the exhaustive sections of Generated.lean, not only by the random sample.
EXHAUSTIVELY_PINNED = (
    "pooled_misses",
    "lru_hits",
    "mtf_stack",
    "lru_cache",
    "since",
    "min_run",
    "forced_min_run",
    "demand_misses",
    "prefix_misses",
    "pooled_block_misses",
    "distinct_blocks",
    "prefix_lru_misses",
    "lru_misses",
    "min_misses",
    "per_host_block_misses",
    "distinct_host_blocks",
    "per_host_prefix_lru",
    "per_host_lru",
    "per_host_min",
    "per_host_misses",
    "distinct_pairs",
    "openings_of",
    "per_host_lru_misses",
)


def test_every_mirrored_definition_has_an_exhaustive_section() -> None:
    from pyverify.lean import generated

    pinned = " ".join(lean for s in generated.exhaustive_sections() for lean, _, _ in s.twins)
    missing = [name for name in EXHAUSTIVELY_PINNED if not re.search(rf"(^|\W){name} ", pinned)]
    assert missing == []


def test_the_exhaustive_inputs_are_every_input_up_to_the_stated_size() -> None:
    """Counted here from the bound, not from the generator's own lists."""
    import itertools

    from pyverify.lean import generated as g

    def every(items, most):
        return [list(t) for n in range(most + 1) for t in itertools.product(items, repeat=n)]

    chains = [
        list(c)
        for c in every(range(g.EXHAUSTIVE_CHAIN_BLOCKS), g.EXHAUSTIVE_CHAIN_LENGTH)
        if c and len(set(c)) == len(c)
    ]
    routed = [(h, c) for h in range(g.EXHAUSTIVE_HOSTS) for c in chains]
    expected = {
        "gen_flat_counts": every(range(g.EXHAUSTIVE_BLOCKS), g.EXHAUSTIVE_LENGTH),
        "gen_chain_counts": every(chains, g.EXHAUSTIVE_CHAINS),
        "gen_routed_counts": every(routed, g.EXHAUSTIVE_ROUTED),
        "gen_routed_openings": every(
            [(h, b) for h in range(g.EXHAUSTIVE_HOSTS) for b in range(g.EXHAUSTIVE_CHAIN_BLOCKS)],
            g.EXHAUSTIVE_LENGTH,
        ),
    }
    sections = {s.lean_def: s for s in g.exhaustive_sections()}
    for name, inputs in expected.items():
        found = sections[name].inputs()
        assert len(found) == len(inputs) and sorted(map(repr, found)) == sorted(map(repr, inputs))
    assert (len(expected["gen_chain_counts"]), len(expected["gen_routed_counts"])) == (85, 73)
    assert len(sections["gen_run_counts"].inputs()) == 1 + 10 + 100


def test_every_small_input_has_its_kernel_checked_example_with_the_twins_values() -> None:
    from pyverify.lean import generated as g

    text = GENERATED.read_text(encoding="utf-8")
    for section in g.exhaustive_sections():
        assert section.definition() in text
        for _, term, values in section.examples():
            line = (
                f"example : Eq ({section.lean_def} {term}) "
                f"{g.lean_list([section.value_term(v) for v in values])} := rfl"
            )
            assert line in text, line


def test_a_simulator_wrong_on_one_routed_input_changes_the_generated_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per-host longest-prefix misses wrong only on two requests, both on host 1: no random
    sample need draw that input, the exhaustive section does."""
    script = load_script()
    original = simulate.per_host_misses
    monkeypatch.setattr(
        simulate,
        "per_host_misses",
        lambda chains, routing: (
            original(chains, routing) + (list(routing) == [1, 1] and chains == [[0], [0, 1]])
        ),
    )
    assert script.render() != GENERATED.read_text(encoding="utf-8")


@pytest.mark.parametrize("routed", [False, True])
def test_an_optimal_curve_wrong_at_one_capacity_stops_generation(
    monkeypatch: pytest.MonkeyPatch, routed: bool
) -> None:
    """The one-pass optimal curve is pinned to Lean's MIN (pooled, and per host on 2 hosts) at
    every capacity of every small input: off by one at capacity 2 on one input, the generator
    refuses to write a value (the curve and the trusted recount disagree)."""
    from pyverify.errors import CheckFailed
    from pyverify.lean import generated

    original = generated.optimal_curve

    class Off:
        def __init__(self, curve):
            self.curve = curve

        def misses(self, capacity):
            return self.curve.misses(capacity) + (capacity == 2)

    def wrong(chains, routing=None, fleet_size=1):
        curve = original(chains, routing, fleet_size)
        hit = chains == [[0, 1], [1, 0], [0]] if not routed else chains == [[0, 1], [1, 0]]
        return Off(curve) if hit and (routing is not None) == routed else curve

    monkeypatch.setattr(generated, "optimal_curve", wrong)
    with pytest.raises(CheckFailed, match="twins disagree"):
        load_script().render()


def test_lean_check_states_the_bound_it_checked_the_mirrors_on() -> None:
    from pyverify.lean import generated

    bound = runner.generated_bound()
    assert generated.exhaustive_bound() in bound
    for number in ("0 .. 2", "<= 3", "hosts 0 .. 1"):
        assert number in bound
