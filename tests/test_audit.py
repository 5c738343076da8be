"""``pyverify audit``, the main job, as a new user runs it."""

from __future__ import annotations

import json
import re

import pytest

from pyverify.cli import main
from pyverify.reports.wording import overclaims

from .conftest import LAB_INSTANCE, MOONCAKE_SYNTHETIC, NO_MOONCAKE, REPO


@pytest.fixture(scope="module")
def audit_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "audit-out"
    assert (
        main(
            [
                "audit",
                str(LAB_INSTANCE),
                "-o",
                str(out),
                "--registry",
                str(REPO / "lean" / "theorems.json"),
            ]
        )
        == 0
    )
    return out


def test_report_directory_has_everything(audit_dir):
    files = sorted(str(p.relative_to(audit_dir)) for p in audit_dir.rglob("*") if p.is_file())
    assert files == [
        ".pyverify-output.json",  # the marker that lets a later audit replace this directory
        "certificates/lab-512x32x16.per-host.json",
        "certificates/lab-512x32x16.pooled.json",
        "report.html",
        "report.md",
        "summary.json",
        "sweep.png",
        "sweep.svg",
    ]
    assert not list(audit_dir.parent.glob(".audit-out.*"))  # no staging left behind
    assert ".audit-out." not in (audit_dir / "report.md").read_text()


def test_summary_numbers(audit_dir):
    summary = json.loads((audit_dir / "summary.json").read_text())
    certs = summary["certificates"]
    assert (certs["pooled"]["status"], certs["pooled"]["objective"], certs["pooled"]["bound"]) == (
        "OPTIMAL",
        32,
        32,
    )
    assert (
        certs["per-host"]["status"],
        certs["per-host"]["objective"],
        certs["per-host"]["bound"],
    ) == ("OPTIMAL", 338, 338)
    rows = {row["fleet_size"]: row for row in summary["sweep"]["rows"]}
    assert rows[2]["per_host_hit_rate"] == 0.875 and rows[16]["per_host_misses"] == 338
    assert all(row["pooled_hit_rate"] == 0.9375 for row in rows.values())
    assert summary["lean"]["ok"] and all(t["axioms"] == [] for t in summary["lean"]["theorems"])
    links = [entry["link"] for entry in summary["bridge"]["certificates"]]
    assert [(link["covered"], link["agrees"]) for link in links] == [(True, True), (True, True)]
    assert [step["step"] for step in summary["steps"]] == [
        "validate",
        "sweep",
        "memory limit",
        "certify",
        "verify",
        "lean check",
        "bridge",
        "report",
    ]
    # The memory-limit section, recounted here from the instance with the LRU reference and the MIN oracle.
    from pyverify.certify.belady import belady_misses
    from pyverify.inputs.model import load_instance

    from .helpers import flat_lru_misses

    memory = summary["memory_limit"]
    pages = [block for chain in load_instance(LAB_INSTANCE).chains for block in chain]
    for row in memory["lru_vs_optimum"][:6]:
        c = row["capacity_blocks"]
        assert row["lru_hit_rate"] == 1 - flat_lru_misses(pages, c) / len(pages)
        assert row["opt_hit_rate"] == 1 - belady_misses(pages, c) / len(pages)


def test_report_keeps_the_parts_apart_and_says_what_it_does_not_show(audit_dir):
    text = (audit_dir / "report.md").read_text()
    assert overclaims(text) == []
    for heading in ("(a) Instance fact", "(b) General fact", "(c) Link", "What this does not show"):
        assert heading in text
    assert "one instance, not a fleet benchmark" in text
    assert "It counts misses only" in text
    html = (audit_dir / "report.html").read_text()
    assert "<table>" in html and 'src="sweep.png"' in html
    assert overclaims(re.sub(r"<[^>]+>", " ", html)) == []


def test_bad_instance_leaves_no_report(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "pyverify.instance/1"')
    out = tmp_path / "out"
    assert main(["audit", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed JSON" in err
    assert list(tmp_path.iterdir()) == [bad]


def test_rerun_replaces_the_old_report(tmp_path):
    out = tmp_path / "out"
    registry = str(REPO / "lean" / "theorems.json")
    assert (
        main(
            [
                "audit",
                str(REPO / "instances" / "greedy-gap-30.json"),
                "-o",
                str(out),
                "--registry",
                registry,
            ]
        )
        == 0
    )
    stale = sorted(p.name for p in (out / "certificates").iterdir())
    assert main(["audit", str(LAB_INSTANCE), "-o", str(out), "--registry", registry]) == 0
    now = sorted(p.name for p in (out / "certificates").iterdir())
    assert now == ["lab-512x32x16.per-host.json", "lab-512x32x16.pooled.json"] and not set(
        stale
    ) & set(now)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing left beside it
    # A file of the user's in the report is never replaced with it (tests/robustness/test_faults.py has the cases).
    (out / "mine.txt").write_text("mine")
    assert main(["audit", str(LAB_INSTANCE), "-o", str(out), "--registry", registry]) == 2
    assert (out / "mine.txt").read_text() == "mine"


def test_html_report_shows_each_lean_statement_as_a_code_block(audit_dir):
    """Each theorem's statement is its own <pre> block in report.html (not run into the text around it)."""
    from html.parser import HTMLParser

    class Blocks(HTMLParser):
        def __init__(self):
            super().__init__()
            self.depth, self.pre = 0, []

        def handle_starttag(self, tag, attrs):
            if tag == "pre":
                self.depth += 1
                self.pre.append("")

        def handle_endtag(self, tag):
            if tag == "pre":
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                self.pre[-1] += data

    parser = Blocks()
    parser.feed((audit_dir / "report.html").read_text())
    summary = json.loads((audit_dir / "summary.json").read_text())
    stated = [fact for entry in summary["bridge"]["certificates"] for fact in entry["general_fact"]]
    assert stated
    for fact in stated:
        assert any(block.strip().startswith(f"{fact['theorem']} : ") for block in parser.pre), fact[
            "theorem"
        ]


def test_audit_of_the_mooncake_trace(tmp_path):
    """The main job on a real trace: certified pooled count, and the memory-limit answers recounted independently."""
    trace = MOONCAKE_SYNTHETIC
    if not trace.is_file():
        pytest.skip(NO_MOONCAKE)
    from pyverify.certify.belady import belady_misses

    from .helpers import flat_lru_misses

    out = tmp_path / "report"
    assert (
        main(
            [
                "audit",
                str(trace),
                "-o",
                str(out),
                "--registry",
                str(REPO / "lean" / "theorems.json"),
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    pages = [
        block
        for line in trace.read_text().splitlines()
        if line.strip()
        for block in json.loads(line)["hash_ids"]
    ]
    assert summary["certificates"]["pooled"]["objective"] == len(set(pages))
    local = summary["memory_limit"]["local_vs_global"]
    assert (local["nodes"], local["node_capacity_blocks"]) == (16, 3_000_000 // 512)
    total = 16 * local["node_capacity_blocks"]
    assert local["global_lru"] == 1 - flat_lru_misses(pages, total) / len(pages)
    small = summary["memory_limit"]["lru_vs_optimum"][3]
    assert small["opt_hit_rate"] == 1 - belady_misses(pages, small["capacity_blocks"]) / len(pages)


def test_the_report_words_solver_records_as_the_certifiers(audit_dir):
    """No solver is re-run to check a certificate: every line of the report that shows
    what a solver record says (its version or time) says it is the certifier's word."""
    from pyverify.trusted.check import NOT_RECHECKED

    text = (audit_dir / "report.md").read_text().splitlines()
    summary = json.loads((audit_dir / "summary.json").read_text())
    for model, cert in summary["certificates"].items():
        assert cert["solver_times_s"]["checked"] == NOT_RECHECKED
        records = json.loads((audit_dir / cert["file"]).read_text())["solvers"]
        for record in filter(None, records.values()):
            shown = [
                line
                for line in text
                if record["version"] in line or f"{record['wall_time_s']} s" in line
            ]
            assert shown, (model, record["name"])
            assert all(NOT_RECHECKED in line for line in shown), shown


def test_the_report_says_what_to_trust_and_where_the_node_size_comes_from(tmp_path):
    """The report once put "16 hosts, given routing" over a table for one pooled
    cache, did not explain the node size, said the theorems cover only caches
    without a size limit, and had no "what you must trust" section."""
    from pyverify.cli import main

    assert main(["audit", str(LAB_INSTANCE), "-o", str(tmp_path / "rep")]) == 0
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert (
        "## With a memory limit (simulation and Belady's MIN): one pooled cache, then 16 per-host caches"
        in report
    )
    assert "Each node in the local-against-global line holds 2 blocks, an equal share" in report
    assert "## What you must trust" in report and "pyverify/trusted/check.py" in report
    assert "covers caches with no size limit and no eviction" not in report
    assert "Belady's MIN in bypass form" in report


def test_the_node_size_is_an_option(tmp_path, capsys):
    from pyverify.cli import main

    assert (
        main(["audit", str(LAB_INSTANCE), "-o", str(tmp_path / "rep"), "--node-blocks", "4"]) == 0
    )
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert (
        "Each node in the local-against-global line holds 4 blocks, as `audit --node-blocks` asked."
        in report
    )
    capsys.readouterr()
    assert (
        main(["audit", str(LAB_INSTANCE), "-o", str(tmp_path / "other"), "--node-tokens", "1000"])
        == 2
    )
    err = capsys.readouterr().err
    assert (
        f"{LAB_INSTANCE}: block_size_tokens: not given, so --node-tokens cannot be converted" in err
    )
    assert not (tmp_path / "other").exists()
