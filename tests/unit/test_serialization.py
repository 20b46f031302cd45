from __future__ import annotations

import json

import pytest

from tests.unit.support import configured_instances, run_python

INSTANCES = configured_instances()
NAMES = sorted(INSTANCES)

# Prints {class name: json.dumps(instance.serialize())}; key order is kept (sort_keys=False).
SERIALIZE_IN_CHILD = """
import json
from tests.unit.support import configured_instances
print(json.dumps({name: json.dumps(obj.serialize()) for name, obj in configured_instances().items()}))
"""


@pytest.fixture(scope="module")
def child_outputs() -> list[dict[str, str]]:
    """What two fresh interpreters with different hash seeds serialize."""
    return [json.loads(run_python(SERIALIZE_IN_CHILD, hashseed=seed)) for seed in ("1", "987654")]


@pytest.mark.parametrize("name", NAMES)
def test_serialize_is_byte_identical_across_processes_and_hash_seeds(name, child_outputs):
    in_process = json.dumps(INSTANCES[name].serialize())
    assert [output[name] for output in child_outputs] == [in_process, in_process]


@pytest.mark.parametrize("name", NAMES)
def test_serialize_is_stable_within_a_process(name):
    instance = INSTANCES[name]
    assert json.dumps(instance.serialize()) == json.dumps(instance.serialize())


@pytest.mark.parametrize("name", NAMES)
def test_serialize_is_plain_json_with_format_version_1(name):
    data = INSTANCES[name].serialize()
    assert json.loads(json.dumps(data)) == data
    assert data["format_version"] == 1


@pytest.mark.parametrize("name", NAMES)
def test_deserialize_of_serialize_serializes_identically(name):
    instance = INSTANCES[name]
    rebuilt = type(instance).deserialize(json.loads(json.dumps(instance.serialize())))
    assert type(rebuilt) is type(instance)
    assert json.dumps(rebuilt.serialize()) == json.dumps(instance.serialize())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("version", [2, 99])
def test_unreadable_format_version_is_refused(name, version):
    instance = INSTANCES[name]
    data = {**instance.serialize(), "format_version": version}
    with pytest.raises(ValueError, match="format_version"):
        type(instance).deserialize(data)


@pytest.mark.parametrize(
    "name", ["TemporalRollupMapper:sliding", "DimensionRollupMapper", "DimensionFanOutMapper"]
)
def test_a_stored_form_seen_before_is_rebuilt_once_and_shared(name):
    # Airflow rebuilds a Dag's mappers for every queued event and scheduler loop; the constructors'
    # checks cost about 1 ms, so an equal stored form (in any key order) gives the same object.
    original = INSTANCES[name]
    data = json.loads(json.dumps(original.serialize()))
    first = type(original).deserialize(data)
    again = type(original).deserialize(dict(reversed(list(json.loads(json.dumps(data)).items()))))
    assert first is again and first == original
    changed = {**data, "max_downstream_keys": 700}
    other = type(original).deserialize(changed)
    assert other is not first and other.max_downstream_keys == 700
