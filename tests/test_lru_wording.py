"""Chain-order LRU (the default --eviction lru) is named as what it is, in one wording, wherever it is printed."""

from __future__ import annotations


import pytest

from pyverify.sim.simulate import LRU_NAME, LRU_NOTE  # re-exported from pyverify.sim.names

from .conftest import REPO
from .helpers import run_cli, write_timed_trace

INSTANCE = str(REPO / "instances" / "lab-512x32x16.json")


@pytest.fixture
def trace(tmp_path):
    return write_timed_trace(tmp_path)


def test_the_note_says_what_lru_idealises_and_points_to_the_engines():
    assert "a parent block can be evicted before its child" in LRU_NOTE
    assert "--eviction vllm or sglang" in LRU_NOTE


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", INSTANCE, "--capacity", "50"],
        ["simulate", INSTANCE, "--capacity", "50", "--model", "per-host"],
        ["sweep", INSTANCE, "--capacity", "50"],
        ["mrc", INSTANCE, "--capacities", "50"],
        ["replay", "TRACE", "--capacity", "8"],
    ],
)
def test_every_header_names_chain_order_lru_and_what_it_idealises(capsys, trace, argv):
    status, out, err = run_cli(capsys, *[trace if arg == "TRACE" else arg for arg in argv])
    assert status == 0, err
    lines = out.splitlines()
    assert LRU_NAME in lines[0], lines[0]
    assert f"  {LRU_NOTE}" in lines[1:4]


def test_an_engine_eviction_gets_no_lru_note(capsys, trace):
    status, out, err = run_cli(
        capsys, "simulate", INSTANCE, "--capacity", "50", "--eviction", "fifo"
    )
    assert status == 0 and LRU_NOTE not in out and LRU_NAME not in out
