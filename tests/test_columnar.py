"""The columnar trace: the fast JSONL path reads exactly what the strict reader reads
(and refuses exactly what it refuses, with its words), and Parquet/CSV round-trip."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from pyverify.errors import UserError  # noqa: E402
from pyverify.inputs.columnar import (  # noqa: E402
    ColumnarTrace,
    _fast_jsonl,
    first_violation,
    is_prefix_closed,
    read_columnar,
    read_csv,
    read_jsonl,
    read_parquet,
    write_parquet,
)
from pyverify.inputs.load import load_input  # noqa: E402
from pyverify.inputs.model import first_prefix_violation  # noqa: E402
from pyverify.inputs.mooncake import import_mooncake  # noqa: E402
from tests.conftest import MOONCAKE_SYNTHETIC, NO_MOONCAKE  # noqa: E402
from tests.helpers import assert_one_line_error, run_cli  # noqa: E402

MOONCAKE = MOONCAKE_SYNTHETIC


def random_chains(seed: int, requests: int = 300) -> list[list[int]]:
    """Prefix-closed chains: walks down a random tree of block ids (ids from a sparse range when seed is odd)."""
    rng = random.Random(seed)
    sparse = seed % 2 == 1
    children: dict[int, list[int]] = {-1: []}
    next_id = 0
    chains = []
    for _ in range(requests):
        chain, node = [], -1
        for _ in range(rng.randint(1, 12)):
            if children[node] and rng.random() < 0.7:
                node = rng.choice(children[node])
            else:
                new = rng.randrange(2**63) if sparse else next_id
                next_id += 1
                children[node].append(new)
                children[new] = []
                node = new
            chain.append(node)
        chains.append(chain)
    return chains


def write_lines(path, chains, **fields) -> None:
    with open(path, "w") as out:
        for index, chain in enumerate(chains):
            out.write(
                json.dumps(
                    {
                        "timestamp": index,
                        "input_length": 512 * len(chain),
                        "output_length": 1,
                        "hash_ids": chain,
                    }
                )
                + "\n"
            )


def same_as_strict(trace: ColumnarTrace, path) -> None:
    strict = ColumnarTrace.from_instance(import_mooncake(path))
    assert np.array_equal(trace.ids, strict.ids)
    assert np.array_equal(trace.offsets, strict.offsets)
    for name in ("timestamps", "input_tokens", "output_tokens", "block_tokens"):
        mine, theirs = getattr(trace, name), getattr(strict, name)
        assert (mine is None) == (theirs is None) and (
            mine is None or np.array_equal(mine, theirs, equal_nan=True)
        ), name
    assert trace.block_size_tokens == strict.block_size_tokens


def parsed_as_strict(
    parsed, strict: ColumnarTrace | None, error: str | None, parser: str
) -> ColumnarTrace | None:
    """A fast parser's columns ``(ids, offsets, timestamps, input_tokens, output_tokens)`` as a trace, when the
    strict reader (its ``strict`` trace or ``error``) read the same file; ``None`` when the reader would still
    decline them (a prefix-closure violation, timestamps going back), and the strict reader then refuses it."""
    ids, offsets, *columns = parsed
    times = columns[0]
    if not is_prefix_closed(ids, offsets):
        assert error is not None and "not prefix-closed" in error
        return None
    if times is not None and np.any(np.diff(times[~np.isnan(times)]) < 0):
        assert error is not None
        return None
    assert error is None, f"{parser} accepted a file the strict reader refuses: {error}"
    return ColumnarTrace(
        name=strict.name,
        ids=ids,
        offsets=offsets,
        timestamps=columns[0],
        input_tokens=columns[1],
        output_tokens=columns[2],
    )


@pytest.mark.parametrize("seed", range(6))
def test_fast_path_reads_what_the_strict_reader_reads(tmp_path, seed):
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(seed))
    fast = _fast_jsonl(path)
    assert fast is not None, "the fast path must take a plain Mooncake file"
    same_as_strict(fast, path)


@pytest.mark.parametrize("block", [16, 200, 1 << 22])
@pytest.mark.parametrize("seed", range(3))
def test_pyarrows_chunks_are_read_as_one_trace(tmp_path, monkeypatch, seed, block):
    """pyarrow's reader makes a chunk per block of lines; their ids are copied into one array chunk by chunk."""
    import pyverify.inputs.columnar.jsonl as jsonl_module

    monkeypatch.setattr(
        jsonl_module, "read_plain_mooncake", lambda *args: None
    )  # json.dumps' form: pyarrow reads it here
    monkeypatch.setattr(jsonl_module, "JSON_BLOCK_BYTES", block)
    path = tmp_path / "t.jsonl"
    write_lines(path, random_chains(seed))
    data = path.read_bytes()
    chunks = (
        jsonl_module._parse_jsonl(data, max(map(len, data.splitlines())))
        .column("hash_ids")
        .num_chunks
    )
    assert (chunks > 1) == (block < 1 << 22)
    fast = _fast_jsonl(path)
    assert fast is not None, (
        "the pyarrow path must take a plain Mooncake file in any number of chunks"
    )
    same_as_strict(fast, path)


@pytest.mark.skipif(not MOONCAKE.exists(), reason=NO_MOONCAKE)
def test_fast_path_on_the_mooncake_trace():
    fast = _fast_jsonl(MOONCAKE)
    assert fast is not None
    same_as_strict(fast, MOONCAKE)


GOOD = '{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [0, 1]}'

# Lines the strict reader refuses; the fast path must refuse each with the same words.
BAD_LINES = {
    "duplicate known key": '{"hash_ids": [0], "hash_ids": [0, 1]}',
    "duplicate unknown key": '{"hash_ids": [0, 1], "x": 1, "x": 2}',
    "escaped duplicate key": '{"hash_ids": [0, 1], "hash\\u005fids": [0]}',
    "NaN": '{"hash_ids": [0, 1], "timestamp": NaN}',
    "Infinity in an unknown field": '{"hash_ids": [0, 1], "x": Infinity}',
    "float id": '{"hash_ids": [0, 1.0]}',
    "boolean id": '{"hash_ids": [0, true]}',
    "negative id": '{"hash_ids": [0, -1]}',
    "id too large": '{"hash_ids": [0, 9223372036854775808]}',
    "empty chain": '{"hash_ids": []}',
    "no hash_ids": '{"timestamp": 3}',
    "null hash_ids": '{"hash_ids": null}',
    "null id": '{"hash_ids": [0, null]}',
    "two objects on a line": GOOD + " " + GOOD,
    "not an object": "[0, 1]",
    "truncated": '{"hash_ids": [0, 1',
    "negative timestamp": '{"hash_ids": [0, 1], "timestamp": -1}',
    "float length": '{"hash_ids": [0, 1], "input_length": 3.0}',
    "lone surrogate": '{"hash_ids": [0, 1], "x": "\\ud800"}',
    "closure": '{"hash_ids": [1]}',
    "decreasing time": '{"timestamp": 0.5, "hash_ids": [0]}',
}


@pytest.fixture(
    params=[
        "pyarrow",
        "pyarrow in blocks of a line",
        "byte parser",
        "plain parser",
        "plain parser in pieces",
    ]
)
def fast_reader(request, monkeypatch):
    """Each fast JSONL path in turn: pyarrow's (here every file; in one block, and in blocks of about a
    line, so a table of many chunks whose ids are copied chunk by chunk), the compiled byte parser (files of ``MIN_BYTES`` or more; here
    every file) and the numpy parser of json.dumps' form (every file below ``MIN_BYTES``; whole, and in pieces
    of a line), so one list of hostile files holds all of them to the strict reader."""
    import pyverify.inputs.columnar.jsonl as jsonl_module
    import pyverify.inputs.columnar.plain_parse as plain_parse

    if not request.param.startswith("plain parser"):
        monkeypatch.setattr(jsonl_module, "read_plain_mooncake", lambda *args: None)
    else:  # as in a process without numba loaded: a file this small then goes to the plain parser
        monkeypatch.setattr(jsonl_module, "worth_it", lambda *args: False)
    if request.param == "plain parser in pieces":
        monkeypatch.setattr(plain_parse, "PIECE_BYTES", 1)
    if request.param == "pyarrow in blocks of a line":
        monkeypatch.setattr(jsonl_module, "JSON_BLOCK_BYTES", 16)
    if request.param == "byte parser":
        pytest.importorskip("numba")
        monkeypatch.setattr(jsonl_module, "MIN_BYTES", 0)
    return request.param


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_fast_path_refuses_what_the_strict_reader_refuses(tmp_path, fast_reader, name):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join([GOOD, '{"timestamp": 1, "hash_ids": [0, 1, 2]}', BAD_LINES[name], GOOD]) + "\n"
    )
    with pytest.raises(UserError) as strict:
        import_mooncake(path)
    with pytest.raises(UserError) as fast:
        read_jsonl(path)
    assert str(fast.value) == str(strict.value)
    assert "line 3" in str(fast.value)


# Files the strict reader accepts but the fast path cannot vouch for: the result must still be the strict one.
ODD_BUT_GOOD = {
    "blank lines": GOOD + "\n\n   \n" + GOOD + "\n",
    "unknown fields": GOOD[:-1]
    + ', "type": "chat", "w": 2.5, "flag": true, "nested": {"a": [1]}}\n',
    "escaped unknown key": GOOD[:-1] + ', "caf\\u00e9": 1}\n',
    "no final newline": GOOD,
    "tabs and CRLF": GOOD.replace(", ", ",\t") + "\r\n" + GOOD + "\r\n",
    "null timestamp": '{"timestamp": null, "hash_ids": [0, 1]}\n',
    # kvcache-simulator's fields count on any record, not only the first (the strict reader honours them there)
    "block_size on a later line": GOOD
    + '\n{"timestamp": 1, "block_size": 64, "hash_ids": [0, 1, 2]}\n',
    "block_tokens on a later line": GOOD
    + '\n{"timestamp": 1, "block_tokens": [8, 8], "hash_ids": [0, 3]}\n',
}


@pytest.mark.parametrize("name", sorted(ODD_BUT_GOOD))
def test_cautious_fast_path_still_gives_the_strict_result(tmp_path, fast_reader, name):
    path = tmp_path / "odd.jsonl"
    path.write_text(ODD_BUT_GOOD[name])
    same_as_strict(read_jsonl(path), path)


@pytest.mark.parametrize("seed", range(8))
def test_vectorised_prefix_closure_finds_the_same_first_violation(seed, monkeypatch):
    from pyverify.inputs.columnar import closure

    monkeypatch.setattr(
        closure, "CHUNK", 7
    )  # many chunks, chains cut across them (patched where is_prefix_closed reads it)
    monkeypatch.setattr(closure, "STEP", 3)  # and steps within a chunk
    monkeypatch.setattr(
        closure, "worth_it", lambda *args: False
    )  # numpy's passes, even once numba is loaded
    chains = random_chains(seed, 80)
    rng = random.Random(seed)
    victim = rng.randrange(1, len(chains))
    chains[victim] = (
        chains[victim][:-1] + [chains[rng.randrange(len(chains))][0]]
        if len(chains[victim]) > 1
        else [chains[0][-1]]
    )
    lengths = [len(c) for c in chains]
    ids = np.array([b for c in chains for b in c], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    expected = first_prefix_violation(chains)
    found = first_violation(ids, offsets)
    assert is_prefix_closed(ids, offsets) == (expected is None)
    if expected is None:
        assert found is None
    else:
        assert found == (expected.request, expected.position, expected.reason)


@settings(max_examples=400, deadline=None)
@given(
    chains=st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=5), min_size=1, max_size=8),
    chunk=st.sampled_from([1, 2, 3, 5, 1 << 24]),
    step=st.sampled_from([1, 2, 1 << 16]),
)
def test_prefix_closure_on_arrays_agrees_with_the_strict_checker(chains, chunk, step):
    """Arbitrary chains over a few ids (most of them not prefix-closed: an id after two parents, after the root
    and a block, or twice in a chain), read back in chunks and steps of every size: closed exactly when the strict
    checker finds no violation, and the first violation the same."""
    from pyverify.inputs.columnar import closure

    ids = np.array([b for c in chains for b in c], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(c) for c in chains]))).astype(np.int64)
    expected = first_prefix_violation(chains)
    saved = closure.CHUNK, closure.STEP, closure.worth_it
    # numpy's passes, even once numba is loaded (tests/test_columnar_compiled.py sets the compiled pass against them)
    closure.CHUNK, closure.STEP, closure.worth_it = chunk, step, lambda *args: False
    try:
        closed = is_prefix_closed(ids, offsets)
    finally:
        closure.CHUNK, closure.STEP, closure.worth_it = saved
    assert closed == (expected is None)
    found = first_violation(ids, offsets)
    assert found == (
        None if expected is None else (expected.request, expected.position, expected.reason)
    )


def test_parquet_round_trip_and_every_command_reads_it(tmp_path, capsys):
    jsonl = tmp_path / "t.jsonl"
    write_lines(jsonl, random_chains(3))
    parquet = tmp_path / "t.parquet"
    status, out, err = run_cli(capsys, "trace", "import", str(jsonl), "-o", str(parquet), "--json")
    assert status == 0, err
    assert json.loads(out)["block_references"] == sum(len(c) for c in random_chains(3))
    back = read_parquet(parquet)
    same_as_strict(back, jsonl)
    # Detected by content, whatever the name.
    renamed = tmp_path / "trace.data"
    renamed.write_bytes(parquet.read_bytes())
    assert load_input(renamed).chains == import_mooncake(jsonl).chains
    for argv in (
        ["validate"],
        ["simulate", "--model", "per-host", "--routing", "round-robin", "--fleet", "4"],
    ):
        a = run_cli(capsys, *argv[:1], str(renamed), *argv[1:], "--json")
        b = run_cli(capsys, *argv[:1], str(jsonl), *argv[1:], "--json")
        assert a[0] == b[0] == 0
        for key in ("block_references", "distinct_blocks", "misses", "hits"):
            assert json.loads(a[1]).get(key) == json.loads(b[1]).get(key)


def test_bad_jsonl_imported_to_parquet_writes_nothing(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(GOOD + "\n" + '{"hash_ids": [1]}\n')
    target = tmp_path / "out.parquet"
    status, out, err = run_cli(capsys, "trace", "import", str(path), "-o", str(target))
    assert_one_line_error(status, out, err, path, "line 2.hash_ids[0]: not prefix-closed")
    assert list(tmp_path.iterdir()) == [path]


def parquet_of(tmp_path, lists, type_=None, **columns):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    arrays = {"hash_ids": pa.array(lists, type=type_ or pa.list_(pa.int64()))}
    arrays.update({k: pa.array(v) for k, v in columns.items()})
    pq.write_table(pa.table(arrays), path)
    return path


@pytest.mark.parametrize(
    "lists,type_,where,reason",
    [
        ([[0, 1], []], None, "row 2.hash_ids", "empty"),
        ([[0, 1], None], None, "row 2.hash_ids", "missing"),
        ([[0, 1], [0, None]], None, "row 2.hash_ids[1]", "block id is null"),
        ([[0, 1], [2, -3]], None, "row 2.hash_ids[1]", "block id -3 is negative"),
        (
            [[0, 1], [1]],
            None,
            "row 2.hash_ids[0]",
            "not prefix-closed: block 1 follows the root here but followed block 0 earlier",
        ),
        (
            [[0, 2**63]],
            "uint64",
            "row 1.hash_ids[1]",
            "block id 9223372036854775808 is larger than 2**63-1",
        ),
        ([["a"]], "str", "hash_ids", "expected a list of integer block ids"),
    ],
)
def test_bad_parquet_names_row_and_field(tmp_path, capsys, lists, type_, where, reason):
    import pyarrow as pa

    kinds = {None: None, "uint64": pa.list_(pa.uint64()), "str": pa.list_(pa.string())}
    path = parquet_of(tmp_path, lists, kinds[type_])
    status, out, err = run_cli(capsys, "simulate", str(path), "--model", "pooled")
    assert_one_line_error(status, out, err, path, f"{where}: {reason}")


def test_parquet_host_and_route_key_columns(tmp_path):
    path = parquet_of(tmp_path, [[0, 1], [0, 2], [3]], host=[0, 1, 1], route_key=["a", "b", "a"])
    instance = load_input(path)
    assert instance.routing == (0, 1, 1) and instance.fleet_size == 2
    assert [item["route_key"] for item in instance.extra] == ["a", "b", "a"]


def test_csv_with_a_hash_ids_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        'timestamp,hash_ids,input_length\n0,"[0, 1, 2]",1536\n1,0 1 3,1536\n2,[4],512\n'
    )
    trace = read_csv(path)
    assert trace.ids.tolist() == [0, 1, 2, 0, 1, 3, 4]
    assert trace.offsets.tolist() == [0, 3, 6, 7]
    assert read_columnar(path).input_tokens.tolist() == [1536, 1536, 512]
    assert load_input(path).chains == ((0, 1, 2), (0, 1, 3), (4,))


@pytest.mark.parametrize(
    "cell,where,reason",
    [
        ('"[0, x]"', "row 2.hash_ids[1]", "'x' is not an integer"),
        ('"[]"', "row 2.hash_ids", "empty"),
        ('"[0, 1.5]"', "row 2.hash_ids[1]", "not an integer"),
        ('"[1, 9]"', "row 2.hash_ids[1]", "not prefix-closed"),
    ],
)
def test_bad_csv_names_row_and_field(tmp_path, capsys, cell, where, reason):
    path = tmp_path / "t.csv"
    path.write_text(f'hash_ids\n"[9]"\n{cell}\n')
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, f"{where}: ")
    assert reason in err


def test_parquet_is_read_row_group_by_row_group_with_global_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    chains = random_chains(4, 50)
    trace = ColumnarTrace.from_instance(import_mooncake(_jsonl(tmp_path, chains)))
    path = tmp_path / "groups.parquet"
    write_parquet(trace, path, rows_per_group=3)
    assert pq.ParquetFile(path).metadata.num_row_groups == 17
    back = read_parquet(path)
    assert np.array_equal(back.ids, trace.ids) and np.array_equal(back.offsets, trace.offsets)
    bad = [[0, 1], [0, 2], [3], [3, 4], [5, -6], [7]]
    pq.write_table(
        pa.table({"hash_ids": pa.array(bad, type=pa.list_(pa.int64()))}), path, row_group_size=2
    )
    with pytest.raises(UserError, match=r"row 5\.hash_ids\[1\]: block id -6 is negative"):
        read_parquet(path)


@pytest.mark.parametrize("rows_per_group", [None, 7])
@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_parquet_is_streamed_in_batches_with_global_rows(
    tmp_path, monkeypatch, batch, rows_per_group
):
    """One thread streams the file in batches of rows (and each row group is read in batches on its thread):
    the trace and the rows errors name are the same in batches of any size, and the batches are that size."""
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq

    import pyverify.inputs.columnar.tables as tables

    monkeypatch.setattr(tables, "BATCH_ROWS", batch)
    chains = random_chains(6, 50)
    trace = ColumnarTrace.from_instance(import_mooncake(_jsonl(tmp_path, chains)))
    path = tmp_path / "batches.parquet"
    write_parquet(
        trace, path, **({} if rows_per_group is None else {"rows_per_group": rows_per_group})
    )
    groups = pq.ParquetFile(path).metadata.num_row_groups
    assert (groups == 1) == (rows_per_group is None)
    chunks = list(tables._hash_id_chunks(path, groups))
    sizes = [len(chunk) for chunk in chunks]
    assert sum(sizes) == len(chains) and max(sizes) == min(
        batch, rows_per_group or batch, len(chains)
    )
    if groups == 1:
        assert len(chunks) == math.ceil(len(chains) / batch)
    back = read_parquet(path)
    assert np.array_equal(back.ids, trace.ids) and np.array_equal(back.offsets, trace.offsets)
    bad = [[0, 1], [0, 2], [3], [3, 4], [5, -6], [7]]
    pq.write_table(
        pa.table({"hash_ids": pa.array(bad, type=pa.list_(pa.int64()))}),
        path,
        **({} if rows_per_group is None else {"row_group_size": 2}),
    )
    with pytest.raises(UserError, match=r"row 5\.hash_ids\[1\]: block id -6 is negative"):
        read_parquet(path)
    unclosed = [[0, 1], [0, 2], [3], [5, 1]]  # block 1 after 0, then after 5
    pq.write_table(pa.table({"hash_ids": pa.array(unclosed, type=pa.list_(pa.int64()))}), path)
    with pytest.raises(UserError, match=r"row 4\.hash_ids\[1\]: .*prefix-closed"):
        read_parquet(path)


@pytest.mark.parametrize("element", ["int64", "uint64", "int32"])
def test_a_one_row_group_parquet_keeps_its_ids_without_a_copy(tmp_path, element):
    """One row group of at most one batch of rows: the ids are a view of the decoded column when its values
    are 64-bit (unsigned ones below 2**63 have the same bits), a copy otherwise; either way, the values of a
    many-group read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rank: dict[int, int] = {}
    chains = [
        [rank.setdefault(block, len(rank)) for block in chain] for chain in random_chains(5, 40)
    ]  # fit int32
    lists = pa.array(chains, type=pa.list_(getattr(pa, element)()))
    one, many = tmp_path / "one.parquet", tmp_path / "many.parquet"
    pq.write_table(pa.table({"hash_ids": lists}), one)
    pq.write_table(pa.table({"hash_ids": lists}), many, row_group_size=7)
    assert (
        pq.ParquetFile(one).metadata.num_row_groups == 1
        and pq.ParquetFile(many).metadata.num_row_groups > 1
    )
    single, grouped = read_parquet(one), read_parquet(many)
    assert single.ids.dtype == np.int64 and np.array_equal(single.ids, grouped.ids)
    assert np.array_equal(single.offsets, grouped.offsets) and single.offsets[0] == 0
    root = single.ids
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert isinstance(root.base, pa.Buffer) == (
        element != "int32"
    )  # a view of the decoded column, or a copy
    assert single.ids.tolist() == [block for chain in chains for block in chain]


def _jsonl(tmp_path, chains):
    path = tmp_path / "c.jsonl"
    write_lines(path, chains)
    return path


def test_engines_recognise_trace_files_by_content_not_by_name(tmp_path):
    """``--backend auto`` and ``mrc --sample-rate`` read a trace file directly when its
    content is Parquet, CSV or Mooncake JSONL, whatever it is called; anything
    else (token logs, instances, gzip) goes through the loader, which reads all formats."""
    import gzip

    from pyverify.commands.engine_options import is_trace_file

    mooncake = '\n{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1, 2]}\n'
    files = {
        "trace.txt": (mooncake, True),
        "trace.jsonl": (mooncake, True),
        "tokens.jsonl": ('{"prompt_token_ids": [1, 2, 3]}\n', False),
        "instance.jsonl": ('{"format": "pyverify.instance/1", "chains": [[1]]}\n', False),
        "pretty.json": ('{\n  "hash_ids": [1]\n}\n', False),
        "empty.jsonl": ("", False),
        "header.csv": ('timestamp,hash_ids\n0,"[1, 2]"\n', True),
    }
    for name, (text, expected) in files.items():
        (tmp_path / name).write_text(text)
        assert is_trace_file(str(tmp_path / name)) is expected, name
    (tmp_path / "trace.jsonl.gz").write_bytes(gzip.compress(mooncake.encode()))
    assert not is_trace_file(str(tmp_path / "trace.jsonl.gz"))
    assert not is_trace_file(str(tmp_path))  # a directory


# kvcache-simulator's block_size or block_tokens on a later record only: the strict reader honours them there
# (README: "records that give none share it"), so every path must read them, whatever the first record says.
LATER_SIZES = {
    "block_size": '{"hash_ids": [1, 2], "input_length": 1024}\n{"hash_ids": [1, 3], "input_length": 1000}\n'
    '{"block_size": 64, "hash_ids": [1, 2, 4], "input_length": 1500}\n',
    "block_tokens": '{"hash_ids": [1, 2], "input_length": 1024}\n'
    '{"block_tokens": [5, 7], "hash_ids": [1, 3], "input_length": 1000}\n',
}


@pytest.mark.parametrize("field", sorted(LATER_SIZES))
def test_a_size_field_on_a_later_record_reads_the_same_on_every_path(tmp_path, capsys, field):
    path = tmp_path / "kvs.jsonl"
    path.write_text(LATER_SIZES[field])
    reports = {}
    for engine in ("auto", "python"):
        status, out, err = run_cli(
            capsys,
            "simulate",
            str(path),
            "--capacity-tokens",
            "1024",
            "--backend",
            engine,
            "--json",
        )
        assert status == 0, err
        report = json.loads(out)
        reports[engine] = (
            report["sha256"],
            report["cache_size"]["capacity_blocks"],
            report["measured"]["token_hit_rate"],
        )
    assert reports["auto"] == reports["python"]
    strict = import_mooncake(path)
    assert read_columnar(path).block_size_tokens == strict.block_size_tokens
    status, _, err = run_cli(
        capsys, "trace", "import", str(path), "-o", str(tmp_path / "kvs.parquet")
    )
    if field == "block_tokens":  # weights per block: refused, as when the first record gives them
        assert status == 2 and "block_tokens" in err and not (tmp_path / "kvs.parquet").exists()
    else:
        assert status == 0, err
        same_as_strict(read_parquet(tmp_path / "kvs.parquet"), path)


@st.composite
def files_sized_later(draw) -> bytes:
    """Prefix-closed Mooncake files (each chain a path down a small tree) whose later records, and only those,
    carry kvcache-simulator's ``block_size`` (sometimes two different ones, which the strict reader refuses)
    or ``block_tokens``, in the form json.dumps writes, so every fast parser is tempted by the first line."""
    from pyverify.inputs.columnar.plain_parse import SEPARATORS

    node_ids: dict[tuple[int, ...], int] = {}
    style = draw(st.sampled_from(SEPARATORS))
    sizes = draw(st.lists(st.sampled_from([16, 64, 512]), min_size=1, max_size=2))
    n = draw(st.integers(2, 6))
    lines = []
    for index in range(n):
        path = draw(st.lists(st.integers(0, 2), min_size=1, max_size=5))
        chain = [
            node_ids.setdefault(tuple(path[: depth + 1]), len(node_ids))
            for depth in range(len(path))
        ]
        record = {"timestamp": index, "input_length": draw(st.integers(0, 4000)), "hash_ids": chain}
        if index > 0 and draw(st.booleans()):
            if draw(st.booleans()):
                record = {"block_size": draw(st.sampled_from(sizes)), **record}
            else:
                record["block_tokens"] = [draw(st.integers(1, 600)) for _ in chain]
        lines.append(json.dumps(record, separators=style))
    return ("\n".join(lines) + "\n").encode()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=files_sized_later())
def test_every_fast_reader_honours_sizes_given_on_later_records(
    tmp_path_factory, fast_reader, data
):
    """Each fast path reads such a file as the strict reader does (block size and weights included) or names
    the same line; and the commands' dispatch sends it to the per-record readers, which honour them."""
    from pyverify.commands.input_options import _richer_than_mooncake

    path = tmp_path_factory.mktemp("sized") / "t.jsonl"
    path.write_bytes(data)
    try:
        strict = import_mooncake(path)
    except UserError as error:
        with pytest.raises(UserError) as raised:
            read_jsonl(path)
        assert str(raised.value) == str(error)
        return
    same_as_strict(read_jsonl(path), path)
    if strict.block_size_tokens != 512 or any("block_tokens" in item for item in strict.extra):
        assert _richer_than_mooncake(str(path))


@pytest.mark.parametrize(
    "columns,where,reason",
    [
        (
            {"label.turn": [1.5, 2.0]},
            "label.turn",
            "expected an integer or a string column, got double",
        ),
        ({"label.type": ["text", "x" * 300]}, "row 2.label.type", "longer than 256 characters"),
        ({"label.": [1, 2]}, "label.", "a label's name has 1 to 64 characters"),
        ({f"label.k{i}": [1, 2] for i in range(17)}, "label.k16", "more than 16 label columns"),
    ],
)
def test_bad_label_columns_name_the_column(tmp_path, capsys, columns, where, reason):
    """Label columns read back only as labels an instance may hold (its schema's limits)."""
    path = parquet_of(tmp_path, [[0, 1], [0, 2]], **columns)
    status, out, err = run_cli(capsys, "validate", str(path))
    assert_one_line_error(status, out, err, path, f"{where}: {reason}")


def test_label_columns_read_back_as_labels(tmp_path):
    path = parquet_of(
        tmp_path, [[0, 1], [0, 2]], **{"label.chat_id": [7, None], "label.type": ["text", "search"]}
    )
    assert [item.get("labels") for item in read_parquet(path).to_instance().extra] == [
        {"chat_id": 7, "type": "text"},
        {"type": "search"},
    ]
