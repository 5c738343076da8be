"""Re-blocking to a coarser block size from the ids alone: every Kth id, and when it is allowed."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pyverify.errors import UserError
from pyverify.inputs.load import load_described
from pyverify.inputs.model import Instance, first_prefix_violation, load_instance
from pyverify.inputs.reblock import reblock
from pyverify.inputs.records import ImportOptions

from .helpers import run_cli
from .strategies import prefix_closed_chains
from .test_token_import import jsonl

# 512-token blocks. Request 1: 3 blocks, the last partial (1400 = 2*512 + 376);
# request 2: 4 full blocks; request 3: one partial block.
MOONCAKE = jsonl(
    {"timestamp": 0, "input_length": 1400, "hash_ids": [1, 2, 3]},
    {"timestamp": 1, "input_length": 2048, "hash_ids": [1, 2, 4, 5]},
    {"timestamp": 2, "input_length": 100, "hash_ids": [1]},
)


def test_mooncake_reblocked_by_hand(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(MOONCAKE)
    loaded = load_described(path, ImportOptions(block_size=1024))
    # Request 1's last block is partial, so the trace names partial blocks: leftovers stay as a partial block.
    assert loaded.instance.chains == ((2, 3), (2, 5), (1,))
    assert loaded.instance.block_size_tokens == 1024
    assert [item["input_tokens"] for item in loaded.instance.extra] == [1400, 2048, 100]
    assert loaded.notes[0].startswith(
        "re-blocked to 1024-token blocks: the last id of every 2 consecutive blocks (partial last blocks kept"
    )
    out = tmp_path / "t.json"
    status, _, _ = run_cli(
        capsys, "trace", "import", str(path), "-o", str(out), "--block-size", "1536"
    )
    assert status == 0 and load_instance(out).chains == ((3,), (4, 5), (1,))


def test_full_block_traces_keep_full_blocks_only():
    chains = ((10, 11, 12), (10, 11, 13, 14), (10,))
    extra = tuple(
        {"input_tokens": 4 * len(chain) + 1} for chain in chains
    )  # full 4-token blocks, 1-token tails
    instance = Instance("t", 1, chains, block_size_tokens=4, extra=extra)
    coarse, notes = reblock(instance, 2)
    assert coarse.chains == ((11,), (11, 14)) and coarse.block_size_tokens == 8
    assert coarse.extra == (extra[0], extra[1])
    assert notes[1] == "left out 1 request(s) shorter than one block of 8 tokens"


@settings(max_examples=60)
@given(
    prompts=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=14), min_size=1, max_size=12),
    small=st.integers(1, 3),
    factor=st.integers(2, 3),
)
def test_reblocking_a_token_import_equals_importing_at_the_coarse_size(
    tmp_path_factory, prompts, small, factor
):
    """Same structure, up to the ids' names, and the same token counts."""
    path = tmp_path_factory.mktemp("r") / "log.jsonl"
    path.write_text(jsonl(*({"prompt_token_ids": p} for p in prompts)))
    big = small * factor

    def structure(instance):
        names: dict[int, int] = {}
        return [tuple(names.setdefault(b, len(names)) for b in chain) for chain in instance.chains]

    def load(size):
        try:
            return load_described(path, ImportOptions(block_size=size)).instance
        except UserError:  # no request has a full block at this size
            return None

    fine, direct = load(small), load(big)
    if fine is None or direct is None:
        return
    if not any(len(chain) >= factor for chain in fine.chains):
        return
    coarse, _ = reblock(fine, factor)
    assert structure(coarse) == structure(direct)
    assert coarse.extra == direct.extra


@given(prefix_closed_chains(), st.integers(1, 4), st.booleans())
def test_reblocked_chains_stay_prefix_closed(chains, factor, partial):
    extra = tuple({"input_tokens": 10 * len(chain) - (5 if partial else 0)} for chain in chains)
    instance = Instance("t", 1, tuple(chains), block_size_tokens=10, extra=extra)
    try:
        coarse, _ = reblock(instance, factor)
    except UserError:
        assert not partial and all(len(chain) < factor for chain in chains)
        return
    assert first_prefix_violation(coarse.chains) is None
    for chain, item in zip(coarse.chains, coarse.extra):
        assert len(chain) == (
            -(-item["input_tokens"] // (10 * factor))
            if partial
            else item["input_tokens"] // (10 * factor)
        )


def test_when_the_ids_do_not_allow_it(capsys, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(MOONCAKE)
    for size, reason in (
        ("768", "768 is not a whole multiple of the input's 512-token blocks"),
        ("256", "256 is not a whole multiple"),
    ):
        status, stdout, err = run_cli(
            capsys,
            "trace",
            "import",
            str(path),
            "-o",
            str(tmp_path / "o.json"),
            "--block-size",
            size,
        )
        assert (
            status == 2
            and stdout == ""
            and err.startswith(f"pyverify trace import: error: --block-size: {reason}")
        )
    lab = tmp_path / "lab.json"
    lab.write_text(
        json.dumps(
            {
                "format": "pyverify.instance/1",
                "name": "x",
                "hosts": 1,
                "requests": [{"blocks": [1, 2]}],
            }
        )
    )
    status, stdout, err = run_cli(
        capsys, "trace", "import", str(lab), "-o", str(tmp_path / "o.json"), "--block-size", "2"
    )
    assert status == 2 and f"--block-size: {lab} gives no block size" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab.json", "t.jsonl"]


def test_on_the_mooncake_trace_coarse_ids_name_coarse_prefixes():
    """On the real trace, equal coarse ids are exactly equal coarse prefixes of the original ids."""
    import pytest

    from .conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE

    trace = MOONCAKE_SYNTHETIC
    if not trace.exists():
        pytest.skip(NO_MOONCAKE)
    fine = load_described(trace).instance
    coarse = load_described(trace, ImportOptions(block_size=2048)).instance
    assert coarse.n_requests == fine.n_requests and coarse.block_size_tokens == 2048
    prefixes: dict[int, tuple[int, ...]] = {}
    for long, short in zip(fine.chains, coarse.chains):
        ends = [min(4 * (j + 1), len(long)) for j in range(len(short))]
        assert len(short) == -(
            -len(long) // 4
        )  # the trace names partial blocks, so partial coarse blocks stay: ceil(k / 4)
        for block, end in zip(short, ends):
            assert prefixes.setdefault(block, long[:end]) == long[:end]
    # and distinct prefixes get distinct ids
    assert len(set(prefixes.values())) == len(prefixes)
    assert first_prefix_violation(coarse.chains) is None
