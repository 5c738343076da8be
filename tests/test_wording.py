"""The wording guard catches general claims about an instance result."""

from pyverify.reports.wording import overclaims


def test_clean_text_passes():
    text = (
        "CP-SAT proved 32 misses optimal on this instance. The theorem holds for every request list.\n"
        "Status: OPTIMAL on this instance only (uncapacitated)."
    )
    assert overclaims(text) == []


def test_unscoped_optimal_and_scale_claims_are_caught():
    text = "Pooling is optimal. It holds at any scale! The optimum is 32 on this instance. In general, pools win."
    assert overclaims(text) == [
        "Pooling is optimal.",
        "It holds at any scale!",
        "In general, pools win.",
    ]


def test_provably_optimal_is_caught_even_when_scoped():
    assert overclaims("Provably optimal on this instance.") == [
        "Provably optimal on this instance."
    ]


def test_quoted_user_text_is_not_a_claim_but_own_text_still_is():
    quoted = "> A small capacitated instance on which greedy placement misses strictly more than the offline optimum."
    assert overclaims(quoted) == []
    assert overclaims(quoted + "\nThe placement is optimal.") == ["The placement is optimal."]


def test_audit_of_an_instance_whose_description_says_optimum(tmp_path):
    """The greedy-gap instance's own description mentions 'the offline optimum': quoting it is not overclaiming."""
    from pyverify.cli import main
    from .conftest import REPO

    out = tmp_path / "report"
    status = main(
        [
            "audit",
            str(REPO / "instances" / "greedy-gap-30.json"),
            "-o",
            str(out),
            "--registry",
            str(REPO / "lean" / "theorems.json"),
        ]
    )
    assert status == 0
    report = (out / "report.md").read_text()
    assert "> A small capacitated instance" in report and overclaims(report) == []
