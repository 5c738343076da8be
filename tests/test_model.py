"""The instance model: loading, validation, canonical hashing, prefix closure."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from pyverify.errors import UserError
from pyverify.inputs.model import (
    ROOT,
    Instance,
    canonical_json,
    first_prefix_violation,
    instance_from_json,
    instance_sha256,
    load_instance,
    prefix_tree,
)

from .conftest import LAB_INSTANCE
from .strategies import prefix_closed_chains


def instance_json(requests, hosts=2, **extra):
    return {
        "format": "pyverify.instance/1",
        "name": "t",
        "hosts": hosts,
        "requests": requests,
        **extra,
    }


def test_loads_lab_instance():
    instance = load_instance(LAB_INSTANCE)
    assert instance.fleet_size == 16
    assert instance.n_requests == 512
    assert len({chain[0] for chain in instance.chains}) == 32
    assert all(len(chain) == 1 for chain in instance.chains)


def test_hash_ignores_layout_and_key_order():
    a = instance_from_json(
        instance_json([{"blocks": [1, 2], "host": 0}, {"host": 1, "blocks": [1]}])
    )
    reordered = json.loads(
        json.dumps(
            {
                "requests": [{"host": 0, "blocks": [1, 2]}, {"blocks": [1], "host": 1}],
                "hosts": 2,
                "name": "t",
                "format": "pyverify.instance/1",
            },
            indent=4,
        )
    )
    b = instance_from_json(reordered)
    assert canonical_json(a) == canonical_json(b)
    assert instance_sha256(a) == instance_sha256(b)


def test_hash_changes_with_content():
    a = instance_from_json(instance_json([{"blocks": [1], "host": 0}]))
    b = instance_from_json(instance_json([{"blocks": [1], "host": 1}]))
    assert instance_sha256(a) != instance_sha256(b)


def test_round_trip_keeps_optional_fields():
    data = instance_json(
        [{"blocks": [3], "route_key": "s1", "arrival_ms": 5}],
        description="d",
        block_size_tokens=512,
    )
    instance = instance_from_json(data)
    assert instance.routing is None
    assert instance_from_json(instance.to_json()) == instance
    assert instance.to_json()["requests"][0] == {"blocks": [3], "route_key": "s1", "arrival_ms": 5}


@pytest.mark.parametrize(
    "requests, hosts, field, reason",
    [
        ([{"blocks": []}], 2, "requests[0].blocks", "should be non-empty"),
        ([{"blocks": [1, -2]}], 2, "requests[0].blocks[1]", "less than the minimum"),
        ([{"blocks": ["a"]}], 2, "requests[0].blocks[0]", "is not of type 'integer'"),
        ([{"blocks": [1], "host": 2}], 2, "requests[0].host", "out of range"),
        ([{"blocks": [1], "host": -1}], 2, "requests[0].host", "less than the minimum"),
        (
            [{"blocks": [1], "host": 0}, {"blocks": [1]}],
            2,
            "requests[1].host",
            "give every request a host or none",
        ),
        ([{"blocks": [1], "colour": "red"}], 2, "requests[0]", "'colour' was unexpected"),
        ([{"blocks": [1, 2]}, {"blocks": [3, 2]}], 2, "requests[1].blocks[1]", "not prefix-closed"),
        ([{"blocks": [1, 2]}, {"blocks": [2]}], 2, "requests[1].blocks[0]", "not prefix-closed"),
    ],
)
def test_bad_requests_name_field_and_reason(requests, hosts, field, reason):
    with pytest.raises(UserError) as error:
        instance_from_json(instance_json(requests, hosts), "f.json")
    message = str(error.value)
    assert message.startswith(f"f.json: {field}: "), message
    assert reason in message
    assert "\n" not in message


def test_missing_and_extra_top_level_fields():
    with pytest.raises(UserError, match=r"^f.json: \(top level\): 'hosts' is a required property"):
        instance_from_json(
            {"format": "pyverify.instance/1", "name": "t", "requests": [{"blocks": [1]}]}, "f.json"
        )
    with pytest.raises(UserError, match="'extra' was unexpected"):
        instance_from_json(instance_json([{"blocks": [1]}], extra=1), "f.json")
    with pytest.raises(UserError, match=r"^f.json: format: "):
        instance_from_json(
            {**instance_json([{"blocks": [1]}]), "format": "pyverify.instance/2"}, "f.json"
        )


def test_first_prefix_violation_is_the_first_one():
    chains = [(1, 2, 3), (1, 2), (4, 2), (5, 3)]
    violation = first_prefix_violation(chains)
    assert (violation.request, violation.position) == (2, 1)
    assert "block 2 follows block 4 here but followed block 1 earlier" in violation.reason


def test_repeated_id_inside_one_chain_is_a_violation():
    violation = first_prefix_violation([(7, 7)])
    assert (violation.request, violation.position) == (0, 1)


def test_prefix_tree_of_small_trace():
    tree = prefix_tree([(1, 2, 3), (1, 2, 4), (5,)])
    assert set(tree.successors(ROOT)) == {1, 5}
    assert set(tree.successors(2)) == {3, 4}
    assert tree.nodes[2]["requests"] == 2
    assert tree.nodes[ROOT]["requests"] == 3


@given(prefix_closed_chains())
def test_prefix_tree_every_block_has_one_parent(chains):
    assert first_prefix_violation(chains) is None
    tree = prefix_tree(chains)
    blocks = {block for chain in chains for block in chain}
    assert set(tree.nodes) == blocks | {ROOT}
    assert tree.in_degree(ROOT) == 0
    assert all(tree.in_degree(block) == 1 for block in blocks)
    assert tree.number_of_edges() == len(blocks)  # a tree: one edge per non-root node


def test_instance_is_immutable_value():
    a = Instance(name="x", fleet_size=1, chains=((1,),))
    with pytest.raises(AttributeError):
        a.fleet_size = 2  # type: ignore[misc]
