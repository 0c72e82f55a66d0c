"""Conforming variants of what solar-controller-manager writes into the condition and the token
Secret (solar_conformance/simulators/reference/credential_condition.py, agent_token.py): times in other RFC 3339 forms, other wording of the
Issued message within the profile's patterns, another Secret type and key, the profile's
labels, lifetimes and backoff. Every scenario must pass them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from solar_conformance.core.api import annotations_of
from tests.mutants.model import Patch, patch, variant

CONDITION = "solar_conformance.simulators.reference.credential_condition:CredentialCondition"
TOKEN_MODULE = "solar_conformance.simulators.reference.agent_token"
CONDITION_MODULE = "solar_conformance.simulators.reference.credential_condition"


# --- timestamps: every RFC 3339 form --------------------------------------------------------------
CENTRAL_EUROPEAN_SUMMER = timezone(timedelta(hours=2))


def _with_offset(moment: datetime) -> str:
    """Local time with its offset, as a component in Central Europe writes it in summer."""
    return moment.astimezone(CENTRAL_EUROPEAN_SUMMER).strftime("%Y-%m-%dT%H:%M:%S+02:00")


def _fractional(moment: datetime) -> str:
    """Nanoseconds, every digit written (metav1.MicroTime writes six, Go's RFC3339Nano nine)."""
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}.{moment.microsecond:06d}000Z"


def _rewritten_time(text: str, write: Any) -> str:
    return str(write(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)))


def _times_written_as(write: Any) -> tuple[Patch, ...]:
    """lastReportTime, lastTransitionTime and the Issued message's expiry, written by `write`."""

    @patch("solar_conformance.simulators.reference.agent:utc", rebind=())
    def agent_time(original: Any) -> Any:
        return write

    @patch(f"{CONDITION_MODULE}:set_condition", rebind=())
    def transition_time(original: Any) -> Any:
        def set_(obj: Any, kind: str, status: str, reason: str, message: str, now: Any) -> bool:
            changed = bool(original(obj, kind, status, reason, message, now))
            for condition in obj.get("status", {}).get("conditions", []):
                text = condition.get("lastTransitionTime")
                if condition.get("type") == kind and str(text).endswith("Z") and "." not in text:
                    condition["lastTransitionTime"] = _rewritten_time(text, write)
            return changed

        return set_

    @patch(f"{CONDITION}.report_issued")
    def expiry(original: Any) -> Any:
        def report_issued(self: Any, target: Any, secret: Any) -> None:
            text = annotations_of(secret).get(self.contract.expiry_annotation, "?")
            meta = secret["metadata"]
            self.set_credential_condition(
                target,
                "True",
                "Issued",
                f"token in Secret {meta['namespace']}/{meta['name']}, expires at "
                f"{_rewritten_time(text, write)}",
            )

        return report_issued

    return agent_time, transition_time, expiry


variant(
    "variant-times-with-offset",
    ("report-advances", "condition-issued", "condition-where"),
    "lastReportTime, lastTransitionTime and the Issued message's expiry are written in local "
    "time with its offset (+02:00), not in UTC with Z",
    *_times_written_as(_with_offset),
)


def _offset_and_millis(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}+00:00"


variant(
    "variant-times-utc-offset-and-millis",
    ("report-advances", "condition-issued", "condition-where"),
    "lastReportTime, lastTransitionTime and the Issued message's expiry are written with "
    "milliseconds and the offset +00:00 (2026-01-01T00:00:05.250+00:00)",
    *_times_written_as(_offset_and_millis),
)

variant(
    "variant-times-with-fractions",
    ("report-advances", "condition-issued", "condition-where"),
    "lastReportTime, lastTransitionTime and the Issued message's expiry are written with "
    "nanoseconds (2026-01-01T00:00:05.250000000Z)",
    *_times_written_as(_fractional),
)


# --- the condition's wording ------------------------------------------------------------------
@patch(f"{CONDITION}.report_issued")
def _reworded(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self.set_credential_condition(
            target,
            "True",
            "Issued",
            f"the agent's credential is kept in {meta['namespace']}/{meta['name']} and is "
            f"valid until {expiry}",
        )

    return report_issued


variant(
    "variant-message-reworded",
    ("condition-issued",),
    "the Issued message says 'kept in <namespace>/<name> and is valid until <time>', which the "
    "profile's message patterns describe",
    _reworded,
    profile={
        "message_secret_pattern": r"kept in (?P<namespace>[a-z0-9.-]+)/(?P<name>[a-z0-9.-]+)",
        "message_expiry_pattern": r"valid until (?P<expiry>\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d))",
    },
)


@patch(f"{CONDITION}.report_issued")
def _expiry_first(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        meta = secret["metadata"]
        self.set_credential_condition(
            target,
            "True",
            "Issued",
            f"Issued a token that expires at {expiry}. Secret {meta['namespace']}/{meta['name']} "
            "holds it.",
        )

    return report_issued


variant(
    "variant-message-expiry-first",
    ("condition-issued",),
    "the Issued message names the expiry first and the Secret after it, in the reference "
    "profile's words",
    _expiry_first,
)


@patch(f"{CONDITION}.report_issued")
def _secret_alone(original: Any) -> Any:
    def report_issued(self: Any, target: Any, secret: Any) -> None:
        expiry = annotations_of(secret).get(self.contract.expiry_annotation, "?")
        self.set_credential_condition(
            target,
            "True",
            "Issued",
            f"token in secret/{secret['metadata']['name']}, expires at {expiry}",
        )

    return report_issued


variant(
    "variant-message-names-the-secret-alone",
    ("condition-issued",),
    "the Issued message names the Secret as kubectl does, secret/<name>, without its namespace "
    "(the Target's), which the profile's pattern describes",
    _secret_alone,
    profile={"message_secret_pattern": r"secret/(?P<name>[a-z0-9.-]+)"},
)


# --- the token Secret ---------------------------------------------------------------------------
@patch(f"{TOKEN_MODULE}:new_object", rebind=())
def _custom_secret_type(original: Any) -> Any:
    def made(kind: str, name: str, namespace: str | None = None, **fields: Any) -> Any:
        if kind == "Secret":
            fields["type"] = "solar.opendefense.cloud/agent-token"
        return original(kind, name, namespace, **fields)

    return made


variant(
    "variant-secret-type-and-key",
    ("table-controller", "condition-issued"),
    "the token Secret has the type solar.opendefense.cloud/agent-token and keeps the token under "
    "the key agent-token, as its profile says",
    _custom_secret_type,
    profile={"token_key": "agent-token"},
)

variant(
    "variant-credential-labels",
    ("table-controller",),
    "the credential's objects carry other labels (agent.solar.example/target and "
    "agent.solar.example/credential), as its profile says",
    profile={
        "target_label": "agent.solar.example/target",
        "credential_label": "agent.solar.example/credential",
    },
)

variant(
    "variant-token-lifetime-an-hour",
    ("runbook", "condition-issued"),
    "every token lives an hour, as its profile says",
    profile={"token_lifetime_seconds": 3600},
)

variant(
    "variant-rotates-late",
    ("runbook",),
    "every token lives 20 minutes and is rotated once it is 90 % of that old, as its profile says",
    profile={"token_lifetime_seconds": 1200, "rotate_after_fraction": 0.9},
)

variant(
    "variant-gentler-backoff",
    ("condition-mintfailed", "condition-mintfailed-backoff"),
    "a failed mint is retried after 2 s, doubling up to 20 s, as its profile says",
    profile={"mint_backoff_initial_seconds": 2.0, "mint_backoff_cap_seconds": 20.0},
)
