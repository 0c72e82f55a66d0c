from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core.oci import (
    Chart,
    highest_matching,
    matches_constraint,
    parse_version,
)

versions = st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)).map(
    lambda v: f"{v[0]}.{v[1]}.{v[2]}"
)


@given(st.lists(versions, min_size=1, max_size=15))
def test_any_version_range_picks_the_highest(tags: list[str]) -> None:
    best = highest_matching(tags, ">=0.0.0")
    key = max(tags, key=lambda t: tuple(int(p) for p in t.split(".")))
    assert best == key


@given(st.lists(versions, max_size=15), versions)
def test_picked_tag_satisfies_the_constraint(tags: list[str], floor: str) -> None:
    picked = highest_matching(tags, f">={floor}")
    if picked is None:
        assert not any(matches_constraint(t, f">={floor}") for t in tags)
    else:
        assert matches_constraint(picked, f">={floor}")


def test_pre_releases_need_a_pre_release_constraint() -> None:
    assert not matches_constraint("1.0.0-rc.1", ">=0.0.0")
    assert matches_constraint("1.0.0-rc.1", ">=1.0.0-rc.0")
    assert highest_matching(["1.0.0", "1.1.0-rc.1"], ">=0.0.0") == "1.0.0"


def test_and_or_constraints() -> None:
    assert matches_constraint("1.5.0", ">=1.0.0 <2.0.0")
    assert not matches_constraint("2.0.0", ">=1.0.0, <2.0.0")
    assert matches_constraint("3.0.0", "<1.0.0 || >=3.0.0")
    assert parse_version("v1.2.3") == (1, 2, 3, ())
    assert parse_version("latest") is None


names = st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)
texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200)


@given(names, versions, st.dictionaries(names.map(lambda n: f"{n}.yaml"), texts, max_size=4))
def test_chart_archive_round_trips_and_is_reproducible(
    name: str, version: str, templates: dict[str, str]
) -> None:
    chart = Chart(name, version, templates=templates, annotations={"a": "b"})
    archive = chart.package()
    assert archive == chart.package()
    back = Chart.unpack(archive)
    assert (back.name, back.version, back.templates, back.annotations) == (
        name,
        version,
        templates,
        {"a": "b"},
    )
