"""The wording guard catches general claims about an instance result."""

from pyverify.reports.wording import overclaims


def test_clean_text_passes():
    text = ("CP-SAT proved 32 misses optimal on this instance. The theorem holds for every request list.\n"
            "Status: OPTIMAL on this instance only (uncapacitated).")
    assert overclaims(text) == []


def test_unscoped_optimal_and_scale_claims_are_caught():
    text = "Pooling is optimal. It holds at any scale! The optimum is 32 on this instance. In general, pools win."
    assert overclaims(text) == ["Pooling is optimal.", "It holds at any scale!", "In general, pools win."]


def test_provably_optimal_is_caught_even_when_scoped():
    assert overclaims("Provably optimal on this instance.") == ["Provably optimal on this instance."]
