"""The compiled replay (pyverify.fleet.compiled_replay) against the Python event loop, its oracle, on every field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.replay_oracle import replay_chains, replay_python_chains
from pyverify.fleet.routers import Router, RouterOptions
from tests.helpers import run_cli

SUPPORTED_ROUTERS = ("round-robin", "random")
block_chains = st.lists(
    st.lists(st.integers(0, 12), min_size=0, max_size=6), min_size=0, max_size=25
)


@settings(max_examples=300, deadline=None)
@given(
    chains=block_chains,
    fleet=st.integers(1, 4),
    capacity=st.one_of(st.none(), st.integers(1, 8)),
    eviction=st.sampled_from(("lru", "fifo", "leaf-lru")),
    router=st.sampled_from(SUPPORTED_ROUTERS),
    seed=st.integers(0, 5),
)
def test_compiled_equals_python_on_every_field(chains, fleet, capacity, eviction, router, seed):
    options = RouterOptions(seed=seed)
    compiled = replay_chains(
        chains, Router(router, fleet, options), capacity, eviction, timed=False, backend="compiled"
    )
    python = replay_python_chains(
        chains, Router(router, fleet, options), capacity, eviction, timed=False
    )
    assert (
        compiled == python
    )  # dataclass equality: hosts, hits per tier, per-host stats, times, samples


@st.composite
def engine_requests(draw):
    """Chains with prompt lengths in tokens: full blocks of ``block_size``, a partial last block, or a prompt shorter than one."""
    block_size = draw(st.sampled_from((1, 4)))
    chains = [
        chain for chain in draw(block_chains) if chain or block_size > 1
    ]  # a prompt of 1 token fills a block of 1
    tokens = [
        len(chain) * block_size - draw(st.integers(0, block_size - 1))
        if chain
        else draw(st.integers(1, block_size - 1))
        for chain in chains
    ]
    return chains, tokens, block_size


@settings(max_examples=300, deadline=None)
@given(
    requests=engine_requests(),
    fleet=st.integers(1, 4),
    capacity=st.integers(1, 8),
    eviction=st.sampled_from(("vllm", "sglang", "sglang-fifo")),
    router=st.sampled_from(SUPPORTED_ROUTERS),
    seed=st.integers(0, 5),
)
def test_compiled_engine_evictions_equal_the_event_loop(
    requests, fleet, capacity, eviction, router, seed
):
    chains, tokens, block_size = requests
    options = RouterOptions(seed=seed)
    engine = dict(timed=False, prompt_tokens=tokens, block_size=block_size)
    compiled = replay_chains(
        chains, Router(router, fleet, options), capacity, eviction, backend="compiled", **engine
    )
    python = replay_python_chains(
        chains, Router(router, fleet, options), capacity, eviction, **engine
    )
    assert compiled == python  # hits, unscheduled requests and per-host stats included


def test_fixed_picks_are_the_picks_of_the_same_stream():
    for name in SUPPORTED_ROUTERS:
        picker, caller = (
            Router(name, 5, RouterOptions(seed=3)),
            Router(name, 5, RouterOptions(seed=3)),
        )
        assert picker.fixed_picks(40) == [
            caller.pick(index, [], [], [0] * 5, [0] * 5) for index in range(40)
        ]
    for name in ("least-loaded", "prefix-affinity", "kv-aware"):
        assert Router(name, 3).fixed_picks(10) is None


UNSUPPORTED = [
    ({"timed": True, "arrival_ms": [0.0, 1.0, 2.0]}, "leaf-lru", "round-robin", "timed"),
    ({"timed": False, "host_capacity": 4}, "leaf-lru", "round-robin", "host-DRAM or pool"),
    ({"timed": True, "arrival_ms": [0.0, 1.0, 2.0]}, "vllm", "round-robin", "timed"),
    ({"timed": False}, "leaf-lru", "kv-aware", "router kv-aware"),
]


@pytest.mark.parametrize("kwargs,eviction,router,reason", UNSUPPORTED)
def test_unsupported_configurations_fall_back_under_auto_and_are_refused_under_compiled(
    kwargs, eviction, router, reason
):
    chains = [[1, 2], [1, 3], [1, 2]]
    assert replay_chains(chains, Router(router, 2), 3, eviction, **kwargs) == replay_python_chains(
        chains, Router(router, 2), 3, eviction, **kwargs
    )
    with pytest.raises(ValueError, match=reason):
        replay_chains(chains, Router(router, 2), 3, eviction, backend="compiled", **kwargs)


def write_trace(tmp_path):
    path = tmp_path / "trace.jsonl"
    rows = [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3], [1, 2], [6, 7], [1, 2, 4]]
    path.write_text(
        "".join(json.dumps({"timestamp": t, "hash_ids": h}) + "\n" for t, h in enumerate(rows))
    )
    return path


def test_the_cli_engines_agree_and_compiled_refuses_what_it_cannot_run(tmp_path, capsys):
    trace = str(write_trace(tmp_path))
    outputs = []
    for engine in ("python", "compiled", "auto"):
        status, out, err = run_cli(
            capsys,
            "replay",
            trace,
            "--no-timing",
            "--fleet",
            "2",
            "--capacity",
            "2",
            "--router",
            "round-robin,random",
            "--backend",
            engine,
            "--json",
        )
        assert status == 0, err
        outputs.append(json.loads(out)["runs"])
    assert outputs[0] == outputs[1] == outputs[2] and outputs[0][0]["hit_blocks"] > 0
    status, out, err = run_cli(
        capsys,
        "replay",
        trace,
        "--capacity",
        "2",
        "--eviction",
        "leaf-lru",
        "--backend",
        "compiled",
    )
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--backend compiled" in err and "timed" in err
