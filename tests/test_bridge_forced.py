"""The bridge on forced-admission certificates (``cache_model.admission: forced``).

Such a certificate is covered by exactly ``pinned_misses_ge_forced_min`` when its
model meets the theorem's hypotheses (one pooled cache that starts empty, every
chain of 1 to C blocks) and the theorem's bound, forced MIN's misses on the
chains read twice each, counted by the bridge, is the objective the checker replayed;
it is not covered otherwise, and the theorem is cited only where its hypotheses
hold. One test per case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pyverify.certify.certificate import certify, write_certificate
from pyverify.errors import CheckFailed
from pyverify.inputs.model import load_instance
from pyverify.lean.bridge import (
    NO_PINNED_THEOREM,
    PINNED_THEOREM,
    BridgeEntry,
    BridgeReport,
    twice_forced_min_misses,
    link_certificate,
    load_registry,
)
from pyverify.lean.mirror import forced_min_misses
from pyverify.optimal.forced import forced_misses
from pyverify.trusted import recount
from pyverify.reports.markdown import bridge_markdown
from pyverify.reports.wording import overclaims

from .conftest import REPO

REGISTRY = REPO / "lean" / "theorems.json"

#: Chains per case, certified with 2 blocks and forced admission.
OPENINGS = [[3], [2], [3], [1], [2], [3]]
#: Chains of up to 2 blocks where the pinned optimum meets forced MIN's flat count (6).
FITTING = [[1, 2], [1, 3], [1, 2], [4], [1, 3]]
#: Forced MIN on the flat blocks [3, 1, 2, 3] misses 3 (it drops 1 inside the running
#: request); a pinned cache holds 1 and 2 after the second request and misses 4, and so
#: does forced MIN on the chains read twice, the theorem's bound.
GAP = [[3], [1, 2], [3]]
#: A chain of 3 blocks cannot be pinned whole in 2.
LONG = [[1, 2, 3], [1, 2]]


def forced_certificate(
    tmp_path: Path, chains, model: str = "pooled", capacity: int = 2
) -> tuple[Path, Path]:
    instance_path = tmp_path / "instance.json"
    requests = [{"blocks": chain, "host": t % 2} for t, chain in enumerate(chains)]
    instance_path.write_text(
        json.dumps(
            {"format": "pyverify.instance/1", "name": "forced", "hosts": 2, "requests": requests}
        )
    )
    done = certify(
        load_instance(instance_path),
        model,
        capacity,
        30.0,
        [],
        use_z3=True,
        instance_path=str(instance_path),
        admission="forced",
    )
    path = tmp_path / "certificate.json"
    write_certificate(done.certificate, path, instance_path)
    return path, instance_path


def names(entry: BridgeEntry) -> list[str]:
    return [t.name for t in entry.theorems]


@pytest.mark.parametrize("chains", [OPENINGS, FITTING, GAP], ids=["openings", "chains", "gap"])
def test_forced_certificate_is_covered_by_the_pinned_theorem(tmp_path, chains):
    path, instance_path = forced_certificate(tmp_path, chains)
    entry = link_certificate(path, instance_path, load_registry(REGISTRY))
    link = entry.link
    assert link.covered and link.agrees
    assert link.predicted == entry.certificate_data["objective"]
    assert link.predicting_theorem == link.lower_bound_theorem == PINNED_THEOREM
    assert names(entry)[0] == PINNED_THEOREM
    assert all(h.holds for h in link.hypotheses)
    # The general fact is the registered statement; the report says what it establishes.
    assert entry.general_fact()[0]["theorem"] == PINNED_THEOREM
    text = bridge_markdown(BridgeReport(str(REGISTRY), [entry]))
    assert f"hypotheses of `{PINNED_THEOREM}`" in text and "forced-admission optimum" in text
    assert "keeps every block" not in text.split("(c) Link")[1].split("Lower bound")[0]
    assert overclaims(text) == []


def test_the_bound_reaches_the_pinned_optimum_where_the_flat_count_does_not(tmp_path):
    path, instance_path = forced_certificate(tmp_path, GAP)
    entry = link_certificate(path, instance_path, load_registry(REGISTRY))
    assert entry.certificate_data["objective"] == entry.link.predicted == 4
    assert forced_min_misses([b for chain in GAP for b in chain], 2) == 3


def test_an_objective_above_the_bound_is_not_covered(tmp_path):
    """The theorem applies (it is cited, its bound is counted) but does not reach the objective
    (here raised by hand, the checker bypassed): not covered."""
    path, instance_path = forced_certificate(tmp_path, OPENINGS)
    cert = json.loads(path.read_text())
    bound = twice_forced_min_misses(OPENINGS, 2)
    cert["objective"] = bound + 1
    entry = link_certificate(
        path, instance_path, load_registry(REGISTRY), verify=lambda c, i: (0, ["ok"]), raw=cert
    )
    assert not entry.link.covered and entry.link.predicted == bound
    assert f"below the objective {bound + 1}" in entry.link.why_not
    assert names(entry)[0] == PINNED_THEOREM
    assert "Not covered by the theorem" in bridge_markdown(BridgeReport(str(REGISTRY), [entry]))


def test_a_chain_longer_than_the_cache_is_not_covered(tmp_path):
    path, instance_path = forced_certificate(tmp_path, LONG)
    entry = link_certificate(path, instance_path, load_registry(REGISTRY))
    assert not entry.link.covered
    assert "'every chain has 1 to C blocks (pinned whole)' does not hold" in entry.link.why_not
    assert PINNED_THEOREM not in names(entry)  # cited only where its hypotheses hold


def test_a_per_host_forced_certificate_is_not_covered(tmp_path):
    path, instance_path = forced_certificate(tmp_path, OPENINGS, model="per-host")
    entry = link_certificate(path, instance_path, load_registry(REGISTRY))
    assert not entry.link.covered and "'one pooled cache' does not hold" in entry.link.why_not
    assert PINNED_THEOREM not in names(entry)


def test_without_the_pinned_theorem_a_forced_certificate_is_not_covered(tmp_path):
    path, instance_path = forced_certificate(tmp_path, OPENINGS)
    registry = {n: t for n, t in load_registry(REGISTRY).items() if n != PINNED_THEOREM}
    entry = link_certificate(path, instance_path, registry)
    assert not entry.link.covered and entry.link.why_not == NO_PINNED_THEOREM


def test_an_objective_below_the_pinned_bound_is_refused(tmp_path):
    """Were a forced certificate's objective below the proved bound (here with the checker
    bypassed), the bridge refuses it rather than report it."""
    path, instance_path = forced_certificate(tmp_path, OPENINGS)
    cert = json.loads(path.read_text())
    bound = twice_forced_min_misses(OPENINGS, 2)
    cert["objective"] = bound - 1
    with pytest.raises(
        CheckFailed, match=f"is below {bound}, forced MIN's misses .* {PINNED_THEOREM}"
    ):
        link_certificate(
            path, instance_path, load_registry(REGISTRY), verify=lambda c, i: (0, ["ok"]), raw=cert
        )


def test_a_forced_certificate_naming_a_bypass_theorem_is_refused(tmp_path):
    path, instance_path = forced_certificate(tmp_path, OPENINGS)
    cert = copy.deepcopy(json.loads(path.read_text()))
    cert["theorem"] = "min_run_is_prefix_run"
    path.write_text(json.dumps(cert))
    with pytest.raises(CheckFailed, match="admit every block \\(forced admission\\)"):
        link_certificate(path, instance_path, load_registry(REGISTRY))


def test_a_forced_certificate_naming_the_theorem_without_its_hypotheses_is_refused(tmp_path):
    path, instance_path = forced_certificate(tmp_path, LONG)
    cert = json.loads(path.read_text())
    cert["theorem"] = PINNED_THEOREM
    path.write_text(json.dumps(cert))
    with pytest.raises(CheckFailed, match="does not meet its hypothesis 'every chain has 1 to C"):
        link_certificate(path, instance_path, load_registry(REGISTRY))


def test_a_bypass_certificate_naming_the_pinned_theorem_is_refused(tmp_path):
    instance_path = tmp_path / "instance.json"
    instance_path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "bypass",
                "hosts": 1,
                "requests": [{"blocks": [b], "host": 0} for b in (3, 2, 3)],
            }
        )
    )
    done = certify(
        load_instance(instance_path), "pooled", 1, 30.0, [], instance_path=str(instance_path)
    )
    cert = copy.deepcopy(done.certificate)
    cert["theorem"] = PINNED_THEOREM
    path = tmp_path / "certificate.json"
    write_certificate(cert, path, instance_path)
    with pytest.raises(CheckFailed, match="may drop a block at once \\(bypass\\)"):
        link_certificate(path, instance_path, load_registry(REGISTRY))


def tree_chains(rng, requests: int, longest: int) -> list[list[int]]:
    """Random prefix-closed chains of 1 to ``longest`` blocks: root paths of a random tree."""
    parent: dict[int, int | None] = {}
    chains: list[list[int]] = []
    for _ in range(requests):
        path: list[int] = []
        if parent and rng.random() < 0.6:
            node: int | None = rng.choice(sorted(parent))
            while node is not None:
                path.append(node)
                node = parent[node]
            path.reverse()
            path = path[: rng.randint(1, len(path))]
        while not path or (len(path) < longest and rng.random() < 0.5):
            parent[len(parent)] = path[-1] if path else None
            path.append(len(parent) - 1)
        chains.append(path[:longest])
    return chains


@pytest.mark.parametrize("seed", range(300))
def test_the_engines_pinned_optimum_is_the_theorems_bound(seed):
    """On prefix-closed chains of 1 to C blocks, the pinned rule's count (the engines' optimum,
    pyverify/optimal/forced.py, and the checker's recount) equals forced MIN on the chains read
    twice (the Python twin of Lean's `forced_min_misses`, held to the Lean definition by
    Generated.lean), the count `pinned_misses_ge_forced_min` bounds every pinned run by."""
    import random

    rng = random.Random(seed)
    capacity = rng.randint(1, 4)
    chains = tree_chains(rng, rng.randint(1, 10), capacity)
    twice = [block for chain in chains for block in (*chain, *chain)]
    bound = forced_min_misses(twice, capacity)
    assert forced_misses(chains, None, capacity) == bound
    assert recount.forced_misses(chains, [0] * len(chains), capacity) == bound
    assert twice_forced_min_misses(chains, capacity) == bound


@pytest.mark.parametrize("seed", range(40))
def test_the_bridge_counts_lean_forced_min(seed):
    """The bound the bridge counts (the checker's forced recount, one block per request, on any
    chains) is the Python twin of Lean's `forced_min_misses` on the chains read twice."""
    import random

    rng = random.Random(seed)
    chains = [
        [rng.randrange(6) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 12))
    ]
    capacity = rng.randint(1, 4)
    twice = [block for chain in chains for block in (*chain, *chain)]
    assert twice_forced_min_misses(chains, capacity) == forced_min_misses(twice, capacity)
