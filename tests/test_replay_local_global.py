"""``replay --compare`` answers the Mooncake paper's question: local caches against one global pool.

With unlimited lower tiers both sides have a closed form, computed here from sets
without the replay: the global pool serves every repeat (references - distinct
blocks), local DRAM serves every repeat on the same host (per host, references
- distinct), so the printed ratio is checked against numbers the replay did not make.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import run_cli
from tests.strategies import prefix_closed_chains


def write_trace(path, chains) -> None:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": 10 * index,
                    "input_length": 512 * len(chain),
                    "output_length": 3,
                    "hash_ids": chain,
                }
            )
            + "\n"
            for index, chain in enumerate(chains)
        )
    )


def repeats(chains) -> int:
    return sum(map(len, chains)) - len({block for chain in chains for block in chain})


@settings(max_examples=25, deadline=None)
@given(
    chains=prefix_closed_chains(max_nodes=10, max_requests=14),
    fleet=st.integers(1, 3),
    capacity=st.integers(1, 3),
)
def test_global_over_local_is_the_ratio_of_the_closed_forms(
    tmp_path_factory, chains, fleet, capacity
):
    import contextlib
    import io

    from pyverify.cli import main

    trace = tmp_path_factory.mktemp("trace") / "t.jsonl"
    write_trace(trace, chains)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(
            [
                "replay",
                str(trace),
                "--fleet",
                str(fleet),
                "--capacity",
                str(capacity),
                "--host-capacity",
                "inf",
                "--pool-capacity",
                "inf",
                "--router",
                "round-robin",
                "--compare",
                "--json",
            ]
        )
    assert status == 0
    pairs = json.loads(out.getvalue())["local_against_global"]
    references = sum(map(len, chains))
    global_rate = repeats(chains) / references
    local_rate = sum(repeats(chains[host::fleet]) for host in range(fleet)) / references
    assert [(pair["timed"], pair["router"]) for pair in pairs] == [
        (True, "round-robin"),
        (False, "round-robin"),
    ]
    for pair in pairs:
        assert abs(pair["global_hit_rate"] - global_rate) < 1e-12
        assert abs(pair["local_hit_rate"] - local_rate) < 1e-12
        expected = global_rate / local_rate if local_rate else None
        assert (pair["global_over_local"] is None) == (expected is None)
        if expected is not None:
            assert abs(pair["global_over_local"] - expected) < 1e-9


def test_the_text_prints_the_ratio_beside_the_paper(tmp_path, capsys):
    # Round-robin on 2 hosts: host 0 reads [1,2] twice, host 1 reads [1,3] twice.
    chains = [[1, 2], [1, 3], [1, 2], [1, 3]]
    trace = tmp_path / "t.jsonl"
    write_trace(trace, chains)
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--capacity",
        "1",
        "--host-capacity",
        "inf",
        "--pool-capacity",
        "inf",
        "--router",
        "round-robin",
        "--compare",
    )
    assert status == 0, err
    # Global: 8 references, 3 distinct -> 5 hits. Local: each host 4 references, 2 distinct -> 2 + 2 = 4 hits.
    assert "global pool / local DRAM hit rate, timed: round-robin 1.25x" in out
    assert "global pool / local DRAM hit rate, untimed: round-robin 1.25x" in out
    assert "2.22x (conversation)" in out


def test_no_ratio_without_both_configurations(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    write_trace(trace, [[1, 2], [1, 3]])
    status, out, err = run_cli(
        capsys,
        "replay",
        str(trace),
        "--fleet",
        "2",
        "--capacity",
        "1",
        "--pool-capacity",
        "inf",
        "--compare",
    )
    assert status == 0, err
    assert "global pool / local DRAM" not in out
