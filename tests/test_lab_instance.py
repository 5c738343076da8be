"""The lab instance reproduces the seed's published figures, and every number
``pyverify sweep`` prints agrees with a recomputation from the file alone."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import LAB_INSTANCE, REPO


def sweep_json(*extra):
    result = subprocess.run(
        [sys.executable, "-m", "pyverify.cli", "sweep", str(LAB_INSTANCE), "--json", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_published_figures():
    rows = {row["fleet_size"]: row for row in sweep_json()["rows"]}
    assert sorted(rows) == [2, 4, 8, 16]
    for row in rows.values():
        assert row["pooled_misses"] == 32
        assert row["pooled_hit_rate"] == 0.9375
    assert rows[2]["per_host_hit_rate"] == 0.875
    assert rows[16]["per_host_misses"] == 338
    assert round(rows[16]["per_host_hit_rate"], 4) == 0.3398


def test_every_printed_number_matches_a_recount_from_the_file():
    """Recount with nothing but json: an opening (chain of one block) misses once
    per cache that sees it, so misses are distinct openings (pooled) and
    distinct (host mod F, opening) pairs (per-host, fold routing)."""
    raw = json.loads(LAB_INSTANCE.read_text())
    requests = [(r["host"], r["blocks"]) for r in raw["requests"]]
    assert len(requests) == 512 and raw["hosts"] == 16
    assert all(len(blocks) == 1 for _, blocks in requests)
    references = len(requests)
    pooled = len({blocks[0] for _, blocks in requests})
    assert pooled == 32
    for row in sweep_json()["rows"]:
        fleet = row["fleet_size"]
        per_host = len({(host % fleet, blocks[0]) for host, blocks in requests})
        assert row == {
            "fleet_size": fleet,
            "references": references,
            "pooled_misses": pooled,
            "pooled_hit_rate": (references - pooled) / references,
            "per_host_misses": per_host,
            "per_host_hit_rate": (references - per_host) / references,
        }


def test_generator_script_rebuilds_the_committed_file(tmp_path):
    target = tmp_path / "lab.json"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_lab_instance.py"), str(target)],
        check=True,
        capture_output=True,
    )
    assert target.read_bytes() == LAB_INSTANCE.read_bytes()


def test_chart_is_written_as_png_and_svg(tmp_path):
    out = sweep_json("--chart", str(tmp_path / "sweep"))
    assert out["charts"] == [str(tmp_path / "sweep.png"), str(tmp_path / "sweep.svg")]
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "sweep.svg").read_text()
