"""Every agent token the harness sees is for the SolAr API server only and lives the profile's
token lifetime (solar_conformance/page/claims.py); the message that says otherwise shows no token."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from solar_conformance.core.api import new_object
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.contract import REFERENCE
from solar_conformance.page.claims import check_token
from solar_conformance.simulators.memory.cluster import InMemoryCluster


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster("solar", VirtualClock())
    admin = cluster.admin()
    admin.create(new_object("Namespace", "ns"))
    admin.create(new_object("ServiceAccount", "sa", "ns"))
    return cluster


def _landscape(cluster: InMemoryCluster) -> Any:
    return SimpleNamespace(solar_api_audiences=cluster.issuer.api_audiences, contract=REFERENCE)


def _token(cluster: InMemoryCluster, **options: Any) -> str:
    seconds = options.pop("seconds", REFERENCE.token_lifetime_seconds)
    return cluster.admin().create_token("ns", "sa", expiration_seconds=seconds, **options).token


def test_a_token_for_the_solar_api_server_that_lives_the_profiles_lifetime_passes(
    cluster: InMemoryCluster,
) -> None:
    check_token(_landscape(cluster), _token(cluster), "Secret ns/a")


def test_a_token_also_good_for_another_audience_fails_and_names_the_audiences(
    cluster: InMemoryCluster,
) -> None:
    own = cluster.issuer.api_audiences[0]
    token = _token(cluster, audiences=(own, "solar-agent"))
    with pytest.raises(AssertionError) as failed:
        check_token(_landscape(cluster), token, "Secret ns/a")
    assert "solar-agent" in str(failed.value) and "SolAr API server only" in str(failed.value)
    assert token not in str(failed.value) and "eyJ" not in str(failed.value)


def test_a_token_that_lives_longer_than_the_profile_says_fails(cluster: InMemoryCluster) -> None:
    token = _token(cluster, seconds=REFERENCE.token_lifetime_seconds * 3 // 2)
    with pytest.raises(AssertionError, match=r"lives 900s .* token lifetime of 600s"):
        check_token(_landscape(cluster), token, "Secret ns/a")
