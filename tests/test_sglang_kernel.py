"""The compiled radix cache (:mod:`pyverify.cache.sglang_kernel`) against its oracle,
the Python model of SGLang 0.5.23's cache (:mod:`pyverify.cache.sglang`, parity-checked
against SGLang itself by bench/engine_parity.py).

* Hypothesis token traces: shared heads (so prompts diverge inside nodes and split them),
  re-sends, prompts shorter than a page, pages of 1, 2, 4 and 16 tokens, pools from one
  page to room for everything and pools whose refusal bound (pool - 6 tokens) falls among
  the prompts, LRU and FIFO, several caches: every request's hits and refusals equal.
* The hand-checked traces of tests/test_serving_engines.py, where LRU and FIFO differ.
* Mutants: copies of the kernel with one rule changed (priority by the other policy's
  time, no refresh of a split's remainder, the locked leaf not put back) must disagree
  with the oracle on some trace of a fixed set on which the kernel agrees, so the
  comparison above can fail.
* The CLI: ``simulate --eviction sglang|sglang-fifo --json`` prints the same with the
  kernel forced on as with it off.
"""

from __future__ import annotations

import json
import random
import types
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyverify.cache
import pyverify.sim.kernels as kernels
import pyverify.sim.simulate as simulate_module
from pyverify.cli import main
from pyverify.inputs.tokens_import import chain_of_tokens
from pyverify.cache.sglang import sglang_hits

pytestmark = pytest.mark.skipif(not kernels.available(), reason="numba is not installed")

POLICIES = ("lru", "fifo")


def kernel_hits(*args, **kwargs):
    from pyverify.cache.sglang_kernel import sglang_kernel_hits

    return sglang_kernel_hits(*args, **kwargs)


@st.composite
def radix_traces(draw):
    """``(chains, tokens, caches, capacity blocks, block size, page size, max_input)`` over token ids 0..2."""
    block = draw(st.sampled_from([1, 2]))
    page = draw(st.sampled_from([1, 2, 4, 16] if block == 1 else [2, 4, 16]))
    heads = draw(st.lists(st.lists(st.integers(0, 2), max_size=24), min_size=1, max_size=4))
    picks = draw(
        st.lists(
            st.tuples(st.integers(0, len(heads) - 1), st.lists(st.integers(0, 2), max_size=24)),
            min_size=1,
            max_size=30,
        )
    )
    prompts = [heads[head] + tail or [0] for head, tail in picks]
    tokens = [len(prompt) for prompt in prompts]
    chains = [chain_of_tokens(prompt, block) for prompt in prompts]
    caches = draw(st.lists(st.integers(0, 2), min_size=len(chains), max_size=len(chains)))
    smallest = -(-page // block)  # one page
    pool_tokens = draw(
        st.one_of(
            st.integers(page, 6 * page),  # tiny: evictions on nearly every request
            st.integers(
                max(tokens) + 6 - 4, max(tokens) + 6 + 4
            ),  # the refusal bound among the prompts
            st.just(sum(tokens) + page * (len(tokens) + 1) + 8),  # room for everything
        )
    )
    capacity = max(smallest, pool_tokens // block)
    max_input = draw(
        st.sampled_from([None, capacity * block])
    )  # SGLang's bound, or lifted to the pool
    return chains, tokens, caches, capacity, block, page, max_input


@given(radix_traces(), st.sampled_from(POLICIES))
def test_the_kernel_equals_the_reference_on_every_request(trace, policy):
    chains, tokens, caches, capacity, block, page, max_input = trace
    expected = sglang_hits(chains, tokens, caches, capacity, block, page, policy, max_input)
    assert kernel_hits(chains, tokens, caches, capacity, block, page, policy, max_input) == expected


def test_the_hand_checked_traces_where_lru_and_fifo_differ():
    # tests/test_serving_engines.py: C's match splits [1,2] into P=[1] and R=[2]; D evicts one
    # leaf: LRU the older stamp [7], FIFO the older creation R, so E hits [7] under FIFO only.
    chains = [(1, 2), (7,), (1, 2), (8, 9), (7, 6)]
    for policy, expected in (("lru", [0, 0, 1, 0, 0]), ("fifo", [0, 0, 1, 0, 1])):
        assert sglang_hits(chains, [2, 1, 2, 2, 2], [0] * 5, 4, 1, 1, policy, 4)[0] == expected
        assert kernel_hits(chains, [2, 1, 2, 2, 2], [0] * 5, 4, 1, 1, policy, 4)[0] == expected
    # The locked prefix outlives an eviction although FIFO would take it first.
    chains = [(1, 2), (7,), (1, 2, 5, 6), (1, 2)]
    assert kernel_hits(chains, [2, 1, 4, 2], [0] * 4, 4, 1, 1, "fifo", 4) == ([0, 0, 2, 1], [])
    # Pages of 2: the demand is the extension plus a page, and a prompt shorter than a page takes one.
    assert kernel_hits(
        [(1, 2, 3, 4), (5, 6), (1, 2, 3, 4)], [4, 2, 4], [0] * 3, 6, 1, 2, "lru", 6
    ) == ([0, 0, 0], [])
    assert kernel_hits([(1, 2), (5, 6), (7, 8), (), (1, 2)], [4, 4, 4, 1, 4], [0] * 5, 7, 2, 2) == (
        [0] * 5,
        [],
    )
    # SGLang's own bound: a pool of 16 tokens refuses prompts of 10 tokens or more.
    chains = [tuple(range(1, 10)), tuple(range(1, 11)), tuple(range(1, 10))]
    assert kernel_hits(chains, [9, 10, 9], [0] * 3, 16, 1, 1) == ([0, 0, 8], [1])


def test_bad_input_gets_the_references_error():
    for args in (
        ([(1, 2)], [3], [0], 4, 1, 1),
        ([(1,)], [2], [0], 4, 2, 3),
        ([(1,)], [1], [0], 2, 1, 4),
        ([()], [0], [0], 4, 1, 1),
    ):
        with pytest.raises(ValueError) as reference:
            sglang_hits(*args)
        with pytest.raises(
            ValueError, match=str(reference.value).replace("(", r"\(").replace(")", r"\)")
        ):
            kernel_hits(*args)


def test_ids_of_64_bits_and_more():
    big = [(2**63 + 5, 2**64 - 1), (2**63 + 5, 7)]
    assert kernel_hits(big, [2, 2], [0, 0], 20, 1, 1, "lru", 20) == sglang_hits(
        big, [2, 2], [0, 0], 20, 1, 1, "lru", 20
    )
    assert (
        kernel_hits([(2**64, 1)], [2], [0], 20, 1, 1) is None
    )  # more than 64 bits: the caller uses the reference


# --- mutants: the comparison can fail --------------------------------------------------------

KERNEL_SOURCE = (
    Path(pyverify.cache.__file__).with_name("sglang_kernel.py").read_text(encoding="utf-8")
)
MUTATIONS = {
    "priority by the other policy's time": (
        "return node[v, CREATED] if fifo else node[v, ACCESS]",
        "return node[v, ACCESS] if fifo else node[v, CREATED]",
    ),
    "a split's remainder keeps its old stamp": (
        "size = offer(node, heap, size, child, fifo)  # split",
        "pass",
    ),
    "the locked leaf is not put back": ("if stashed != NONE:", "if False:"),
}


def mutant(old: str, new: str):
    """A copy of the kernel module with ``old`` replaced by ``new``, compiled without numba's cache."""
    assert KERNEL_SOURCE.count(old) == 1, old
    module = types.ModuleType("sglang_radix_mutant")
    exec(
        compile(
            KERNEL_SOURCE.replace(old, new).replace("cache=CACHE", "cache=False"),
            "<mutant>",
            "exec",
        ),
        module.__dict__,
    )
    return module


def mutant_answer(changed, *args):
    """The mutant's hits, or the assertion it fails (a mutant that loses track of a leaf can run out of pool)."""
    try:
        return changed.sglang_kernel_hits(*args)
    except AssertionError as error:
        return error


def fixed_traces(count=300, seed=7):
    rng = random.Random(seed)
    for _ in range(count):
        page = rng.choice([1, 1, 2, 4])
        heads = [
            [rng.randint(0, 2) for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 3))
        ]
        prompts = [
            rng.choice(heads) + [rng.randint(0, 2) for _ in range(rng.randint(0, 8))] or [0]
            for _ in range(rng.randint(2, 25))
        ]
        chains = [chain_of_tokens(prompt, 1) for prompt in prompts]
        capacity = rng.randint(page, 30)
        yield chains, [len(prompt) for prompt in prompts], [0] * len(chains), capacity, 1, page


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_kernel_with_one_rule_changed_disagrees_with_the_reference(mutation):
    changed = mutant(*MUTATIONS[mutation])
    caught = False
    for trace in fixed_traces():
        lifted = trace[3]  # max_input: the whole pool, so that small pools evict rather than refuse
        for policy in POLICIES:
            expected = sglang_hits(*trace, policy, lifted)
            assert kernel_hits(*trace, policy, lifted) == expected
            caught = caught or mutant_answer(changed, *trace, policy, lifted) != expected
    assert caught, f"no trace tells the kernel from a copy where {mutation}"


# --- dispatch and the CLI --------------------------------------------------------------------


def write_instance(path: Path, seed: int = 3, requests: int = 300) -> None:
    rng = random.Random(seed)
    heads = [[rng.randint(0, 3) for _ in range(rng.randint(4, 40))] for _ in range(6)]
    prompts = [
        rng.choice(heads)[: rng.randint(1, 40)]
        + [rng.randint(0, 3) for _ in range(rng.randint(0, 30))]
        for _ in range(requests)
    ]
    records = [
        {"blocks": chain_of_tokens(prompt, 1), "input_tokens": len(prompt)} for prompt in prompts
    ]
    path.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "tokens",
                "hosts": 3,
                "block_size_tokens": 1,
                "requests": records,
            }
        )
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "pooled", "--capacity", "300", "--eviction", "sglang"],
        ["--model", "pooled", "--capacity", "300", "--eviction", "sglang-fifo", "--page-size", "4"],
        [
            "--model",
            "per-host",
            "--capacity",
            "120",
            "--eviction",
            "sglang",
            "--page-size",
            "2",
            "--witness",
        ],
        [
            "--model",
            "pooled",
            "--capacity",
            "60",
            "--eviction",
            "sglang-fifo",
            "--warmup-fraction",
            "0.5",
        ],
    ],
)
def test_simulate_prints_the_same_with_the_kernel_on_and_off(tmp_path, capsys, argv):
    import pyverify.cache.sglang_kernel as compiled

    path = tmp_path / "tokens.json"
    write_instance(path)
    outputs, calls = [], []
    real = compiled.sglang_kernel_hits
    for forced in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            if forced:
                patch.setattr(kernels, "MIN_REFERENCES", 0)
                patch.setattr(simulate_module, "SGLANG_BREAK_EVEN", 0)
                patch.setattr(
                    compiled, "sglang_kernel_hits", lambda *a, **k: calls.append(1) or real(*a, **k)
                )
            else:
                patch.setattr(simulate_module, "use_kernels", lambda *args: False)
            assert main(["simulate", str(path), *argv, "--json"]) == 0
            outputs.append(json.loads(capsys.readouterr().out))
    assert calls == [1], "the forced run did not use the kernel"
    assert outputs[0] == outputs[1]
    assert (
        outputs[0]["measured"]["block_hits"] > 0
    )  # the trace shares prefixes: a comparison of something
