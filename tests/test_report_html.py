"""report.html: long Lean statements wrap in their block instead of needing a horizontal scroll."""

from __future__ import annotations

import re

from pyverify.reports.markdown import markdown_to_html


def test_code_blocks_wrap_long_lines():
    statement = "theorem pooled_misses_eq_distinct : " + " ∧ ".join(
        f"h{i} : hypothesis_number_{i}" for i in range(40)
    )
    html = markdown_to_html(f"```lean\n{statement}\n```\n", "t")
    assert "<pre><code" in html and statement.split(" : ")[0] in html
    pre_rule = re.search(r"\}pre\{([^}]*)\}", html).group(
        1
    )  # the rule for pre alone, not "code,pre{...}"
    assert "white-space:pre-wrap" in pre_rule and "overflow-wrap:anywhere" in pre_rule
    assert "overflow-x:auto" not in pre_rule
