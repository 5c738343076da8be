"""The compiled kernels (pyverify.sim.kernels) against their pure-Python oracles.

* stack distances: the histogram of the dead-mark Fenwick kernel equals the one
  from ``stack_distances_fenwick`` (plain Python, one reference at a time),
  pooled and per host, on Hypothesis traces, prefix-closed or not;
* replay: hits per request of the LRU/FIFO kernel equal
  ``simulate._capacitated_hits`` (OrderedDict) at every capacity, and the
  kernel's misses equal libCacheSim's LRU (flat sequence of a prefix-closed
  trace) and FIFO (chains of one block, where longest-prefix FIFO is flat FIFO);
* tree replay: hits per request of the leaf-lru/tail-first kernel equal the
  reference caches (``LeafFirstLRU``'s heap of leaves, ``TailFirstFreeQueue``) at
  every capacity, including chains longer than the cache, pooled and per
  host; traces that are not prefix-closed go to the reference;
* the Mooncake trace, pooled and 16 hosts round-robin;
* the dispatch: simulate and lru_curve use the kernels above the size
  threshold, and ``pyverify --help`` does not load numba.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyverify.sim.kernels as kernels
import pyverify.sim.mrc as mrc
import pyverify.sim.simulate as simulate_module
from pyverify.inputs.model import first_prefix_violation
from pyverify.cache.arrays import dense_ids, flatten
from pyverify.sim.counting import reference_hosts
from pyverify.sim.mrc import (
    COLD,
    curve_from_distances,
    lru_curve,
    stack_distances_fenwick,
    stack_distances_numpy,
)
from pyverify.sim.simulate import (
    FIFO,
    LEAF_LRU,
    LRU,
    PER_HOST,
    POOLED,
    TAIL_FIRST,
    _capacitated_hits,
    simulate,
)

from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE, REPO
from .strategies import prefix_closed_chains, routed_instances

pytest.importorskip("numba")
from pyverify.cache.lru_kernel import capacitated_hits  # noqa: E402
from pyverify.sim.kernels.stack_distance import lru_histogram  # noqa: E402
from pyverify.cache.tree_kernel import tree_hits  # noqa: E402

TRACE = MOONCAKE_SYNTHETIC


def oracle_histogram(sequence, routing_of_reference=None):
    """``(histogram, cold)`` from the plain-Python Fenwick distances, host by host."""
    sequence = list(sequence)
    if routing_of_reference is None:
        distances = stack_distances_fenwick(sequence)
    else:
        distances = []
        for host in sorted(set(routing_of_reference)):
            distances += stack_distances_fenwick(
                [b for b, h in zip(sequence, routing_of_reference) if h == host]
            )
    curve = curve_from_distances(np.array(distances, dtype=np.int64))
    return curve.histogram.tolist(), curve.cold


def kernel_histogram(sequence, hosts=None, fleet=1):
    ids, universe = dense_ids(np.array(sequence, dtype=np.int64))
    histogram, cold = lru_histogram(
        ids, universe, None if hosts is None else np.asarray(hosts, dtype=np.int64), fleet
    )
    return histogram.tolist(), cold


# --- stack distances ---------------------------------------------------------


def test_histogram_by_hand():
    # a b c a b d a: distances - - - 2 2 - 2 -> histogram [0, 0, 3], cold 4
    assert kernel_histogram([1, 2, 3, 1, 2, 4, 1]) == ([0, 0, 3], 4)
    assert kernel_histogram([7, 7, 7]) == ([2], 1)
    assert kernel_histogram([]) == ([], 0)
    # per host: host 0 sees 1 2 1 (distance 1), host 1 sees 1 1 (distance 0)
    assert kernel_histogram([1, 1, 2, 1, 1], hosts=[0, 1, 0, 1, 0], fleet=2) == ([1, 1], 3)


@given(st.lists(st.integers(0, 12), max_size=120))
def test_histogram_equals_oracle_on_any_sequence(sequence):
    assert kernel_histogram(sequence) == oracle_histogram(sequence)


@given(prefix_closed_chains(max_nodes=15, max_requests=30))
def test_pooled_histogram_equals_oracle(chains):
    flat = [block for chain in chains for block in chain]
    assert kernel_histogram(flat) == oracle_histogram(flat)


@given(routed_instances())
def test_per_host_histogram_equals_oracle(case):
    chains, hosts, routing = case
    host_of = [h for chain, h in zip(chains, routing) for _ in chain]
    flat = [block for chain in chains for block in chain]
    assert kernel_histogram(flat, host_of, hosts) == oracle_histogram(flat, host_of)


@given(st.lists(st.integers(0, 12), max_size=80))
def test_per_reference_distances_equal_the_fenwick_oracle(sequence):
    from pyverify.sim.kernels.stack_distance import distances_of

    ids = np.array(sequence, dtype=np.int64)
    assert distances_of(ids, 13, COLD).tolist() == stack_distances_fenwick(sequence)


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 3)), max_size=300))
def test_per_host_distances_equal_the_fenwick_oracle_host_by_host(references):
    # Each reference's distance within its own host's subsequence, given back in trace order.
    from pyverify.sim.kernels.stack_distance import distances_of

    ids = np.array([block for block, _ in references], dtype=np.int64)
    hosts = np.array([host for _, host in references], dtype=np.int64)
    expected = [COLD] * len(references)
    for host in range(4):
        positions = [t for t, (_, h) in enumerate(references) if h == host]
        for t, distance in zip(
            positions, stack_distances_fenwick([references[t][0] for t in positions])
        ):
            expected[t] = distance
    assert distances_of(ids, 21, COLD, hosts, 4).tolist() == expected


@given(st.lists(st.integers(0, 40), min_size=60, max_size=400))
def test_distances_across_words_of_dead_marks_equal_the_fenwick_oracle(sequence):
    # The dead marks are kept 64 positions to a word: sequences past one word, with repeats near the ends
    # of words, exercise the count of the words before p's and the bits of p's own word.
    from pyverify.sim.kernels.stack_distance import distances_of

    assert distances_of(
        np.array(sequence, dtype=np.int64), 41, COLD
    ).tolist() == stack_distances_fenwick(sequence)
    assert kernel_histogram(sequence) == oracle_histogram(sequence)


@pytest.mark.parametrize("position", [0, 1, 62, 63, 64, 65, 127, 128, 191, 192])
def test_previous_reference_at_each_edge_of_a_word(position):
    # Block 1000 is referenced at `position`, after distinct fillers; then every filler before it and a few
    # after it come again (marking dead positions on both sides of the word edge), then block 1000 again.
    fillers = list(range(position))
    after = list(range(2000, 2070))
    sequence = fillers + [1000] + after + fillers[::-1] + after[:5] + [1000]
    from pyverify.sim.kernels.stack_distance import distances_of

    expected = stack_distances_fenwick(sequence)
    ids, universe = dense_ids(np.array(sequence, dtype=np.int64))
    assert distances_of(ids, universe, COLD).tolist() == expected
    assert expected[-1] == len(
        set(fillers) | set(after)
    )  # every other block, once: the oracle counts as LRU does


def test_larger_random_trace_equals_vectorised_oracle():
    from pyverify.sim.kernels.stack_distance import distances_of

    rng = np.random.default_rng(7)
    ids = rng.zipf(1.2, 60_000).astype(np.int64) % 5_000
    distances = stack_distances_numpy(ids)
    assert np.array_equal(distances_of(ids, 5_000, COLD), distances)
    expected = curve_from_distances(distances)
    histogram, cold = kernel_histogram(ids)
    assert (histogram, cold) == (expected.histogram.tolist(), expected.cold)
    assert cold == int(np.count_nonzero(distances == COLD))


# --- replay at one capacity --------------------------------------------------


def assert_replay_equals_oracle(chains, cache_of, capacities):
    for capacity in capacities:
        for eviction in (LRU, FIFO):
            assert capacitated_hits(
                chains, cache_of, capacity, lru=eviction == LRU
            ) == _capacitated_hits(chains, cache_of, capacity, eviction), (capacity, eviction)


@given(routed_instances())
def test_replay_equals_oracle_pooled_and_per_host(case):
    chains, hosts, routing = case
    capacities = range(1, len({b for chain in chains for b in chain}) + 2)
    assert_replay_equals_oracle(chains, [0] * len(chains), capacities)
    assert_replay_equals_oracle(chains, routing, capacities)


@given(
    st.lists(st.lists(st.integers(0, 6), max_size=6), max_size=25),
    st.lists(st.integers(0, 3), min_size=25, max_size=25),
)
def test_replay_equals_oracle_on_any_chains(chains, hosts):
    # Not prefix-closed, repeated blocks within a chain: the refetch path of both policies.
    assert_replay_equals_oracle(chains, hosts[: len(chains)], range(1, 8))


def test_replay_by_hand():
    # FIFO, C = 2: [1,2] misses both; [1,3]: 1 hits, 3 evicts 1 (oldest);
    # [1,2]: 1 misses (evicted), then 2 is held but refetched (made newest).
    chains = [(1, 2), (1, 3), (1, 2)]
    assert capacitated_hits(chains, [0, 0, 0], 2, lru=False) == [0, 1, 0]
    # LRU, C = 2: [1,3] touches 1, so 3 evicts 2; [1,2]: 1 hits, 2 misses.
    assert capacitated_hits(chains, [0, 0, 0], 2, lru=True) == [0, 1, 1]


def test_ids_beyond_64_bits_fall_back_to_python(monkeypatch):
    chains = [(2**70, 2**70 + 1), (2**70,)]
    assert capacitated_hits(chains, [0, 0], 1, lru=True) is None  # the kernel declines
    assert tree_hits(chains, [0, 0], 1, LEAF_LRU) is None
    monkeypatch.setattr(simulate_module, "use_kernels", lambda *args: True)
    for eviction in (LRU, LEAF_LRU):
        run = simulate_module.simulate(chains, None, "pooled", 1, eviction)
        assert list(run.hit_blocks) == _capacitated_hits(chains, [0, 0], 1, eviction)


# --- leaf-first replay (leaf-lru, tail-first) ---------------------------------------


def is_prefix_closed(chains) -> bool:
    return first_prefix_violation(chains) is None


def assert_tree_replay_equals_oracle(chains, cache_of, capacities):
    for capacity in capacities:
        for eviction in (LEAF_LRU, TAIL_FIRST):
            got = tree_hits(chains, cache_of, capacity, eviction)
            expected = _capacitated_hits(chains, cache_of, capacity, eviction)
            # The kernel answers as the reference does, or declines chains that are not
            # prefix-closed (simulate then runs the reference).
            assert got == expected or (got is None and not is_prefix_closed(chains)), (
                capacity,
                eviction,
            )


@given(routed_instances())
def test_tree_replay_equals_oracle_pooled_and_per_host(case):
    chains, hosts, routing = case
    capacities = range(1, len({b for chain in chains for b in chain}) + 2)
    assert_tree_replay_equals_oracle(chains, [0] * len(chains), capacities)
    assert_tree_replay_equals_oracle(chains, routing, capacities)


@given(prefix_closed_chains(max_nodes=40, max_requests=40), st.integers(1, 4))
def test_tree_replay_equals_oracle_when_chains_do_not_fit(chains, capacity):
    # Deep chains and small caches: the one place where leaf-lru and tail-first differ.
    assert_tree_replay_equals_oracle(chains, [0] * len(chains), [capacity])


def test_tree_replay_by_hand():
    # C = 2, chain (1,2,3): tail-first keeps its first two blocks; leaf-lru inserts
    # 1 and 2, evicts its own newest leaf 2 to make room for 3, and stops.
    chains = [(1, 2, 3), (1, 2, 3)]
    assert tree_hits(chains, [0, 0], 2, TAIL_FIRST) == [0, 2]
    assert tree_hits(chains, [0, 0], 2, LEAF_LRU) == [0, 1]
    # C = 3: (1,4) evicts the oldest leaf, 3 (1 is pinned, 2 has a child);
    # then (1,2,3) hits 1 and 2. Both policies agree: every chain fits.
    chains = [(1, 2, 3), (1, 4), (1, 2, 3)]
    for eviction in (LEAF_LRU, TAIL_FIRST):
        assert tree_hits(chains, [0, 0, 0], 3, eviction) == [0, 1, 2]


@given(
    st.lists(st.lists(st.integers(0, 6), max_size=6), max_size=25),
    st.lists(st.integers(0, 3), min_size=25, max_size=25),
)
def test_tree_replay_on_chains_that_are_not_prefix_closed(chains, hosts):
    # The kernel's argument needs prefix closure; it detects a violation and the reference answers.
    assert_tree_replay_equals_oracle(chains, hosts[: len(chains)], range(1, 8))


def test_tree_replay_reports_a_violation():
    from pyverify.cache.lru_kernel import flat_requests
    from pyverify.cache.tree_kernel import tree_replay

    for chains, closed in (([(1, 2), (1, 3)], True), ([(1, 2), (3, 2)], False), ([(1, 1)], False)):
        ids, universe, starts, order, bounds = flat_requests(chains, [0] * len(chains))
        assert tree_replay(ids, starts, order, bounds, universe, 4, True)[1] is closed


lcs = pytest.importorskip("libcachesim")


def libcachesim_misses(policy, sequence, capacity: int) -> int:
    cache = policy(capacity, hashpower=16)
    request = lcs.Request()
    request.obj_size = 1
    hits = 0
    for block in sequence:
        request.obj_id = int(block) + 1
        hits += bool(cache.get(request))
    return len(sequence) - hits


def kernel_misses(chains, capacity, lru):
    hits = capacitated_hits(chains, [0] * len(chains), capacity, lru=lru)
    return sum(len(chain) for chain in chains) - sum(hits)


@given(prefix_closed_chains(max_nodes=12, max_requests=25))
def test_lru_replay_equals_libcachesim(chains):
    flat = [block for chain in chains for block in chain]
    for capacity in range(1, len(set(flat)) + 1):
        assert kernel_misses(chains, capacity, lru=True) == libcachesim_misses(
            lcs.LRU, flat, capacity
        )


@given(st.lists(st.integers(0, 15), max_size=80))
def test_fifo_replay_equals_libcachesim_on_one_block_chains(sequence):
    chains = [(block,) for block in sequence]
    for capacity in range(1, 10):
        assert kernel_misses(chains, capacity, lru=False) == libcachesim_misses(
            lcs.FIFO, sequence, capacity
        )


# --- the Mooncake trace ------------------------------------------------------


@pytest.mark.skipif(not TRACE.exists(), reason=NO_MOONCAKE)
def test_mooncake_trace_pooled_and_per_host():
    from pyverify.inputs.mooncake import import_mooncake

    chains = import_mooncake(TRACE).chains
    ids, lengths = flatten(chains)
    routing = [i % 16 for i in range(len(chains))]
    host_of = reference_hosts(routing, lengths)
    assert kernel_histogram(ids) == oracle_histogram(ids.tolist())
    assert kernel_histogram(ids, host_of, 16) == oracle_histogram(ids.tolist(), host_of.tolist())
    for capacity in (64, 5859):
        assert_replay_equals_oracle(chains, [0] * len(chains), [capacity])
        assert_replay_equals_oracle(chains, routing, [capacity])
        assert_tree_replay_equals_oracle(chains, [0] * len(chains), [capacity])
        assert_tree_replay_equals_oracle(chains, routing, [capacity])
    assert kernel_misses(chains, 1000, lru=True) == libcachesim_misses(lcs.LRU, ids.tolist(), 1000)


# --- dispatch ----------------------------------------------------------------


@given(case=routed_instances())
def test_simulate_and_curve_through_the_kernels_equal_the_oracle(case):
    import pyverify.cache.lru_kernel as replay
    import pyverify.sim.kernels.stack_distance as stack_distance

    import pyverify.cache.tree_kernel as tree_replay

    chains, hosts, routing = case
    calls, curve_calls, tree_calls = [], [], []
    real, real_curve, real_tree = (
        replay.capacitated_hits,
        stack_distance.lru_histogram,
        tree_replay.tree_hits,
    )
    with (
        pytest.MonkeyPatch.context() as patch
    ):  # every input counts as large; count the kernel's calls
        patch.setattr(kernels, "MIN_REFERENCES", 0)
        patch.setattr(mrc, "CURVE_BREAK_EVEN", 0)
        patch.setattr(simulate_module, "REPLAY_BREAK_EVEN", 0)
        patch.setattr(replay, "capacitated_hits", lambda *a, **k: calls.append(1) or real(*a, **k))
        patch.setattr(simulate_module, "TREE_REPLAY_BREAK_EVEN", 0)
        patch.setattr(
            tree_replay, "tree_hits", lambda *a, **k: tree_calls.append(1) or real_tree(*a, **k)
        )
        for model, cache_of in ((POOLED, [0] * len(chains)), (PER_HOST, routing)):
            for capacity in (1, 2, 4):
                for eviction in (LRU, FIFO, LEAF_LRU, TAIL_FIRST):
                    run = simulate(chains, routing, model, capacity=capacity, eviction=eviction)
                    assert list(run.hit_blocks) == _capacitated_hits(
                        chains, cache_of, capacity, eviction
                    )
        assert len(calls) == 12, "simulate did not use the kernel"
        assert len(tree_calls) == 12, "simulate did not use the tree kernel"
        patch.setattr(
            stack_distance, "lru_histogram", lambda *a: curve_calls.append(1) or real_curve(*a)
        )
        pooled, per_host = lru_curve(chains), lru_curve(chains, routing, hosts)
        assert len(curve_calls) == 2, "lru_curve did not use the kernel"
    flat = [block for chain in chains for block in chain]
    host_of = [h for chain, h in zip(chains, routing) for _ in chain]
    assert (pooled.histogram.tolist(), pooled.cold) == oracle_histogram(flat)
    assert (per_host.histogram.tolist(), per_host.cold) == oracle_histogram(flat, host_of)


def test_small_inputs_stay_in_python(monkeypatch):
    small, medium, large = kernels.MIN_REFERENCES - 1, kernels.MIN_REFERENCES, 10**6
    assert not kernels.use_kernels(small, large)
    assert kernels.use_kernels(large, large) == kernels.available()
    # Below break-even, a kernel is used only once numba's start-up is paid in this process.
    assert (
        kernels.use_kernels(medium, large) == kernels.available()
    )  # this module imported the kernels
    for name in kernels._KERNEL_MODULES:
        monkeypatch.delitem(
            sys.modules, name, raising=False
        )  # a kernel this test run has not imported yet
    assert not kernels.use_kernels(medium, large)


def test_without_numba_the_python_code_answers(monkeypatch):
    import pyverify.cache.lru_kernel as replay
    import pyverify.sim.kernels.stack_distance as stack_distance
    import pyverify.cache.tree_kernel as tree_replay

    def not_here(*args, **kwargs):
        raise AssertionError("a kernel ran although numba is unavailable")

    monkeypatch.setattr(kernels, "available", lambda: False)
    monkeypatch.setattr(kernels, "MIN_REFERENCES", 0)
    monkeypatch.setattr(replay, "capacitated_hits", not_here)
    monkeypatch.setattr(stack_distance, "lru_histogram", not_here)
    monkeypatch.setattr(tree_replay, "tree_hits", not_here)
    import pyverify.cache.vllm_kernel as vllm_pool

    monkeypatch.setattr(vllm_pool, "vllm_kernel_hits", not_here)
    import pyverify.cache.sglang_kernel as sglang_radix

    monkeypatch.setattr(sglang_radix, "sglang_kernel_hits", not_here)
    chains = [(1, 2), (1, 3), (1, 2)]
    assert simulate(chains, None, POOLED, capacity=2, eviction=FIFO).hit_blocks == (0, 1, 0)
    assert simulate(chains, None, POOLED, capacity=2, eviction=LEAF_LRU).hit_blocks == (0, 1, 1)
    assert simulate(chains, None, POOLED, capacity=2, eviction=simulate_module.VLLM).hit_blocks == (
        0,
        1,
        1,
    )
    assert simulate(
        chains, None, POOLED, capacity=20, eviction=simulate_module.SGLANG
    ).hit_blocks == (0, 1, 1)
    assert lru_curve(chains).misses(3) == 3


def test_a_host_outside_the_fleet_is_refused():
    with pytest.raises(ValueError, match="outside a fleet of 2"):
        lru_curve([(1,), (1,)], [0, 2], 2)


def test_help_does_not_load_numba():
    code = (
        "import sys\nfrom pyverify.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('numba' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_a_budget_sweep_weighs_the_kernel_against_all_its_runs(monkeypatch):
    """Numba's start-up is paid once per process: a sweep of N budgets asks
    whether N runs together repay it, not whether one does."""
    from pyverify.sim.budgets import budget_sweep

    asked = []
    real = simulate_module.use_kernels
    monkeypatch.setattr(
        simulate_module,
        "use_kernels",
        lambda work, break_even: asked.append(work) or real(work, break_even),
    )
    chains = [(1, 2, 3), (1, 2, 4), (5,)] * 10
    points = budget_sweep(
        chains, [1.0, 2.0, 4.0], bytes_per_token=1 << 20, block_tokens=1024, eviction=LEAF_LRU
    )
    assert [point.capacity_blocks for point in points] == [1, 2, 4]
    assert asked == [3 * 70] * 3  # 70 references, 3 budgets


# --- numba's cache: a per-user folder, never the checkout (issue 26) -----------------------

CHAINS = [(1, 2), (3,), (1, 2, 4), (3,), (1, 2)]
#: A kernel module's kernel (LRU replay) and one compiled through pyverify.optimal.compiled (MIN's count).
KERNEL_RUN = (
    "from pyverify.cache.lru_kernel import capacitated_hits\n"
    "from pyverify.optimal.belady import min_run_flat\n"
    f"print(capacitated_hits({CHAINS}, [0] * {len(CHAINS)}, 2, True))\n"
    f"print(min_run_flat([b for c in {CHAINS} for b in c], [len(c) for c in {CHAINS}], capacity=2)[2])"
)


def compiled_files(folder):
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


@pytest.mark.parametrize("where", ["xdg", "numba_cache_dir", "unwritable"])
def test_kernels_never_write_their_cache_into_the_package(tmp_path, where):
    """A fresh copy of the package compiles a kernel in a subprocess: numba's cache goes to
    $XDG_CACHE_HOME/pyverify/numba, or to the user's own NUMBA_CACHE_DIR, and when the cache
    folder cannot be written the kernel runs uncached; never a .nbi/.nbc under pyverify/."""
    import shutil

    source = tmp_path / "src"
    shutil.copytree(
        REPO / "pyverify", source / "pyverify", ignore=shutil.ignore_patterns("__pycache__")
    )
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory, so nothing can be created under it (even by root)")
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(
        PYTHONPATH=str(source), HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache")
    )
    if where == "numba_cache_dir":
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    if where == "unwritable":
        env.update(HOME=str(blocked), XDG_CACHE_HOME=str(blocked / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", KERNEL_RUN], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    from pyverify.trusted.recount import min_misses

    assert out.stdout.split("\n")[:2] == [
        str(_capacitated_hits(CHAINS, [0] * len(CHAINS), 2, "lru")),
        str(min_misses(CHAINS, [0] * len(CHAINS), 2)),
    ]
    assert compiled_files(source) == []
    expected = {
        "xdg": tmp_path / "cache" / "pyverify" / "numba",
        "numba_cache_dir": tmp_path / "mine",
    }
    cached = compiled_files(tmp_path)
    if where in expected:
        assert {path.name.split(".")[0] for path in cached} == {"lru_kernel", "belady"}, cached
        assert all(expected[where] in path.parents for path in cached), cached
    else:
        assert cached == []


# --- vLLM's block pool (--eviction vllm) ------------------------------------------


@st.composite
def token_traces(draw):
    """Prompts as token ids over a small alphabet (so prefixes, re-sends and partial blocks are common),
    hashed into full-block chains as the token importer does, with a block size, a capacity and caches."""
    from pyverify.inputs.tokens_import import chain_of_tokens

    block = draw(st.integers(1, 3))
    bases = draw(
        st.lists(st.lists(st.integers(0, 2), min_size=0, max_size=6), min_size=1, max_size=3)
    )
    prompts = draw(
        st.lists(
            st.tuples(st.integers(0, len(bases) - 1), st.lists(st.integers(0, 2), max_size=6)),
            min_size=1,
            max_size=25,
        )
    )
    tokens = [bases[base] + tail or [0] for base, tail in prompts]
    chains = [chain_of_tokens(prompt, block) for prompt in tokens]
    caches = draw(st.lists(st.integers(0, 2), min_size=len(chains), max_size=len(chains)))
    return chains, [len(prompt) for prompt in tokens], caches, draw(st.integers(1, 6)), block


@given(token_traces())
def test_vllm_pool_kernel_equals_the_reference(trace):
    from pyverify.cache.vllm_kernel import vllm_kernel_hits
    from pyverify.cache.vllm import vllm_hits

    chains, tokens, caches, capacity, block = trace
    assert vllm_kernel_hits(chains, tokens, caches, capacity, block) == vllm_hits(
        chains, tokens, caches, capacity, block
    )


def test_vllm_pool_kernel_on_the_hand_checked_traces():
    from pyverify.cache.vllm_kernel import vllm_kernel_hits

    # the traces of tests/test_serving_engines.py (expectations derived there from vLLM's source)
    assert vllm_kernel_hits([(1, 2), (1, 2), (1, 2, 5)], [4, 4, 6], [0] * 3, 3, 2) == (
        [0, 1, 2],
        [],
    )
    assert vllm_kernel_hits([(1, 2), (5,), (7,), (1,)], [4, 3, 2, 3], [0] * 4, 3, 2) == (
        [0, 0, 0, 1],
        [],
    )
    assert vllm_kernel_hits([(1, 2), (7,), (), (1, 2)], [4, 2, 1, 5], [0] * 4, 3, 2) == (
        [0, 0, 0, 1],
        [],
    )
    assert vllm_kernel_hits([(1, 2, 3), (1,)], [6, 3], [0, 0], 2, 2) == ([0, 0], [0])
    assert vllm_kernel_hits(
        [(1,), (9,), (1,), (1, 5), (7,), (9, 6)], [1, 1, 1, 2, 1, 2], [0] * 6, 4, 1
    ) == ([0, 0, 0, 1, 0, 0], [])
