"""The compiled event loop (pyverify.fleet.kernel) against replay_python, its oracle, on every field.

Small block universes and capacities so pins and ``fits`` bite; many equal timestamps and a service model
whose rates are powers of two, so finishes tie in time and the request index must break the ties; input
and output lengths None, 0 or given; every router, kv-aware with weights 0, fractional and whole; with and
without host-DRAM and pool tiers, small and unlimited.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.fleet.compiled_replay import PYTHON_ROUTERS, unsupported
from tests.replay_oracle import replay_chains, replay_python_chains
from pyverify.fleet.routers import KV_AWARE_LOADS, ROUTERS, Router, RouterOptions
from pyverify.fleet.run import ReplaySettings
from pyverify.fleet.service import STREAMS, ServiceModel
from pyverify.fleet.kernel import NO_TIER
from tests.helpers import run_cli

block_chains = st.lists(
    st.lists(st.integers(0, 12), min_size=0, max_size=6), min_size=0, max_size=25
)
lower_tier = st.one_of(st.just(False), st.none(), st.integers(1, 6))


@st.composite
def services(draw):
    max_running = draw(st.integers(1, 3))
    if draw(st.booleans()):
        return ServiceModel(
            max_running=max_running, service=STREAMS
        )  # the defaults: times rarely tie
    # Powers of two: prefills and decodes are exact, so requests started together end together.
    return ServiceModel(
        service=STREAMS,
        prefill_tokens_per_s=256.0,
        decode_tokens_per_s=4.0,
        max_running=max_running,
        block_tokens=16,
        kv_bytes_per_token=2.0**20,
        pool_bandwidth_gb_s=2.0**30 / 1e9,
        host_bandwidth_gb_s=2.0**31 / 1e9,
        fetch_latency_ms=draw(st.sampled_from((0.0, 1.0))),
        host_fetch_latency_ms=0.0,
    )


@st.composite
def timed_inputs(draw):
    chains = draw(block_chains)
    n = len(chains)
    arrival_ms = draw(
        st.lists(
            st.sampled_from((0, 0, 1, 2, 10, 250, 500, 1000, 1000, 4000)), min_size=n, max_size=n
        )
    )
    if draw(
        st.integers(0, 4)
    ):  # mostly in time order; else file order with times going back, as a trace may have
        arrival_ms.sort()
    inputs = draw(
        st.one_of(
            st.none(),
            st.lists(st.sampled_from((None, 0, 16, 40, 500, 5000)), min_size=n, max_size=n),
        )
    )
    outputs = draw(
        st.one_of(
            st.none(), st.lists(st.sampled_from((None, 0, 1, 3, 100)), min_size=n, max_size=n)
        )
    )
    return chains, arrival_ms, inputs, outputs


routers = st.sampled_from([name for name in ROUTERS if name not in PYTHON_ROUTERS])
options = st.builds(
    RouterOptions,
    seed=st.integers(0, 5),
    slack=st.sampled_from((1.0, 1.25, 2.0)),
    overlap_weight=st.sampled_from((0.0, 0.5, 1.0, 3.0)),
    load_weight=st.sampled_from((0.0, 0.25, 1.0, 2.0)),
    kv_aware_load=st.sampled_from(KV_AWARE_LOADS),
)


def assert_same_run(compiled, python):
    for name in python.__dataclass_fields__:  # field by field first, so a failure names the field
        assert getattr(compiled, name) == getattr(python, name), name
    assert compiled == python


@settings(max_examples=400, deadline=None)
@given(
    inputs=timed_inputs(),
    fleet=st.integers(1, 4),
    capacity=st.one_of(st.none(), st.integers(1, 6)),
    eviction=st.sampled_from(("lru", "fifo")),
    router=routers,
    options=options,
    service=services(),
    scale=st.sampled_from((1.0, 0.1, 0.37, 3.0)),
    host=lower_tier,
    pool=lower_tier,
)
def test_timed_compiled_equals_python_on_every_field(
    inputs, fleet, capacity, eviction, router, options, service, scale, host, pool
):
    chains, arrival_ms, input_tokens, output_tokens = inputs
    if capacity is None and fleet == 4:
        eviction = "leaf-lru"  # no capacity: every eviction names the same unlimited cache (tiers.gpu_cache)
    run = dict(
        pool_capacity=pool,
        host_capacity=host,
        service=service,
        arrival_ms=arrival_ms,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        arrival_scale=scale,
        timed=True,
    )
    compiled = replay_chains(
        chains, Router(router, fleet, options), capacity, eviction, backend="compiled", **run
    )
    assert_same_run(
        compiled,
        replay_python_chains(chains, Router(router, fleet, options), capacity, eviction, **run),
    )


@settings(max_examples=300, deadline=None)
@given(
    chains=block_chains,
    fleet=st.integers(1, 4),
    capacity=st.one_of(st.none(), st.integers(1, 6)),
    eviction=st.sampled_from(("lru", "fifo")),
    router=routers,
    options=options,
    host=lower_tier,
    pool=lower_tier,
)
def test_untimed_compiled_event_loop_equals_python(
    chains, fleet, capacity, eviction, router, options, host, pool
):
    run = dict(pool_capacity=pool, host_capacity=host, timed=False)
    compiled = replay_chains(
        chains, Router(router, fleet, options), capacity, eviction, backend="compiled", **run
    )
    assert_same_run(
        compiled,
        replay_python_chains(chains, Router(router, fleet, options), capacity, eviction, **run),
    )


DYADIC = dict(
    prefill_tokens_per_s=256.0,
    decode_tokens_per_s=4.0,
    block_tokens=16,
    kv_bytes_per_token=2.0**20,
    pool_bandwidth_gb_s=2.0**30 / 1e9,
    host_bandwidth_gb_s=2.0**31 / 1e9,
    fetch_latency_ms=0.0,
    host_fetch_latency_ms=0.0,
)


@settings(max_examples=400, deadline=None)
@given(
    chains=st.lists(st.lists(st.integers(0, 8), min_size=1, max_size=4), min_size=2, max_size=20),
    data=st.data(),
    fleet=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(1, 5)),
    eviction=st.sampled_from(("lru", "fifo")),
    router=routers,
    options=options,
    max_running=st.integers(1, 3),
    pool=lower_tier,
)
def test_finishes_at_equal_times_break_ties_by_request_index(
    chains, data, fleet, capacity, eviction, router, options, max_running, pool
):
    """Two arrival instants, exact durations: many requests end at the same instant, on one host and across hosts
    (which share the pool), so the order of the finishes (and of the starts they trigger) decides the run."""
    n = len(chains)
    arrival_ms = sorted(data.draw(st.lists(st.sampled_from((0, 2000)), min_size=n, max_size=n)))
    outputs = data.draw(st.lists(st.sampled_from((None, 0, 4)), min_size=n, max_size=n))
    run = dict(
        pool_capacity=pool,
        service=ServiceModel(max_running=max_running, service=STREAMS, **DYADIC),
        arrival_ms=arrival_ms,
        output_tokens=outputs,
        timed=True,
    )
    compiled = replay_chains(
        chains, Router(router, fleet, options), capacity, eviction, backend="compiled", **run
    )
    assert_same_run(
        compiled,
        replay_python_chains(chains, Router(router, fleet, options), capacity, eviction, **run),
    )


def test_pins_hold_a_request_back_until_a_finish_frees_room():
    """Two long requests on one host of 3 blocks: the second waits for the first's pins, then starts at its end."""
    chains = [[1, 2, 3], [4, 5, 6]]
    run = dict(service=ServiceModel(max_running=2, service=STREAMS), arrival_ms=[0, 0], timed=True)
    compiled = replay_chains(chains, Router("round-robin", 1), 3, "lru", backend="compiled", **run)
    assert compiled == replay_python_chains(chains, Router("round-robin", 1), 3, "lru", **run)
    assert (
        compiled.start[1] == compiled.first_token[0] > 0.0
    )  # no decode: it ends at its first token
    assert compiled.hosts[0].max_queue == 1


def test_tables_past_the_memory_bound_take_the_python_loop(monkeypatch):
    """The event loop's tables grow with hosts x distinct blocks; past MAX_TABLE_BYTES auto runs Python (the same
    run) and compiled refuses in one line saying how much it would take."""
    from pyverify.fleet import compiled_replay

    chains = [[0, 1, 2], [0, 1, 3], [4]]  # ids 0..4: 5 distinct blocks
    run = dict(
        service=ServiceModel(max_running=2, service=STREAMS),
        arrival_ms=[0, 0, 1],
        timed=True,
        host_capacity=2,
    )
    expected = replay_python_chains(chains, Router("kv-aware", 2), 2, "lru", **run)
    assert compiled_replay.table_bytes(2, 5, 2, 2, NO_TIER, True) == 2 * 5 * 13 + 2 * 5 * 9
    monkeypatch.setattr(compiled_replay, "MAX_TABLE_BYTES", 2 * 5 * 13 + 2 * 5 * 9 - 1)
    assert replay_chains(chains, Router("kv-aware", 2), 2, "lru", backend="auto", **run) == expected
    with pytest.raises(
        ValueError,
        match=r"^the compiled event loop would hold 0\.0 GiB of tables \(2 hosts x 5 distinct",
    ):
        replay_chains(chains, Router("kv-aware", 2), 2, "lru", backend="compiled", **run)
    monkeypatch.setattr(compiled_replay, "MAX_TABLE_BYTES", 2 * 5 * 13 + 2 * 5 * 9)
    assert (
        replay_chains(chains, Router("kv-aware", 2), 2, "lru", backend="compiled", **run)
        == expected
    )


REFUSED = [
    (
        "leaf-lru",
        dict(timed=True, arrival_ms=[0, 1, 2], service=ServiceModel(service=STREAMS)),
        "round-robin",
        "leaf-lru timed",
    ),
    (
        "leaf-lru",
        dict(timed=False, host_capacity=4),
        "round-robin",
        "leaf-lru with a host-DRAM or pool tier",
    ),
    ("leaf-lru", dict(timed=False), "kv-aware", "leaf-lru under router kv-aware"),
    (
        "vllm",
        dict(timed=True, arrival_ms=[0, 1, 2], service=ServiceModel(service=STREAMS)),
        "round-robin",
        "vllm timed",
    ),
    ("sglang", dict(timed=False), "least-loaded", "sglang under router least-loaded"),
]


@pytest.mark.parametrize("eviction,kwargs,router,reason", REFUSED)
def test_python_only_configurations_are_named_in_one_line(eviction, kwargs, router, reason):
    chains = [[1, 2], [1, 3], [1, 2]]
    settings = ReplaySettings(
        3,
        eviction,
        kwargs.get("host_capacity", False),
        kwargs.get("pool_capacity", False),
        kwargs["timed"],
    )
    message = unsupported(
        Router(router, 2), settings, kwargs.get("service", ServiceModel()).service
    )
    assert message is not None and reason in message and "\n" not in message
    assert replay_chains(chains, Router(router, 2), 3, eviction, **kwargs) == replay_python_chains(
        chains, Router(router, 2), 3, eviction, **kwargs
    )
    with pytest.raises(ValueError, match=reason):
        replay_chains(chains, Router(router, 2), 3, eviction, backend="compiled", **kwargs)


def test_the_cli_runs_a_timed_replay_compiled_as_python_does(tmp_path, capsys):
    path = tmp_path / "trace.jsonl"
    rows = [
        (0, [1, 2, 3], 1500, 5),
        (0, [1, 2, 4], None, 0),
        (3, [5], 300, None),
        (3, [1, 2, 3], 1200, 7),
        (9, [1, 2], None, 2),
        (9, [6, 7], 900, 1),
        (20, [1, 2, 4], 1536, 9),
    ]
    path.write_text(
        "".join(
            json.dumps({"timestamp": t, "hash_ids": h, "input_length": i, "output_length": o})
            + "\n"
            for t, h, i, o in rows
        )
    )
    outputs = []
    for engine in ("python", "compiled"):
        status, out, err = run_cli(
            capsys,
            "replay",
            str(path),
            "--service",
            "streams",
            "--fleet",
            "2",
            "--capacity",
            "3",
            "--host-capacity",
            "2",
            "--pool-capacity",
            "4",
            "--router",
            "kv-aware,least-loaded,prefix-affinity",
            "--arrival-scale",
            "0.01",
            "--backend",
            engine,
            "--json",
        )
        assert status == 0, err
        outputs.append(json.loads(out)["runs"])
    assert outputs[0] == outputs[1] and len(outputs[0]) == 3
