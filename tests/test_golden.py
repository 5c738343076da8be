"""Every command's --json output on the committed instances is what tests/golden/ holds.

The redesign of the package moves code, not behaviour: a change that alters an output on purpose
rewrites the file with scripts/golden_outputs.py and names the field in CHANGELOG.md.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from .conftest import REPO

spec = importlib.util.spec_from_file_location(
    "golden_outputs", REPO / "scripts" / "golden_outputs.py"
)
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)


@pytest.mark.parametrize("name", sorted(golden.COMMANDS))
def test_the_output_is_the_golden_one(name):
    expected = json.loads((golden.GOLDEN / f"{name}.json").read_text())
    assert golden.first_difference(expected, golden.output(name)) is None


def test_a_changed_value_is_named_by_its_path():
    assert (
        golden.first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]})
        == ".a[1].b: expected 2, got 3"
    )
    assert golden.first_difference({"a": 1}, {"a": 1, "c": 0}) == ".c: new"
