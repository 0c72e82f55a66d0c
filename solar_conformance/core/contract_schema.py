"""What an implementation profile may say: every key of `Contract`, each value checked for what it
means (a label is a Kubernetes label key, a lifetime one Kubernetes' TokenRequest accepts, a
pattern compiles and has the named groups the harness reads), then the rules across keys.

pydantic checks the types, refuses unknown keys and gathers every problem of the file at once;
the rules below give each problem its own words (docs/contracts.md lists them).
"""

from __future__ import annotations

import math
import re
from dataclasses import fields, replace
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, field_validator

from solar_conformance.core.contract import REFERENCE, Contract
from solar_conformance.core.inputs import Problem, TomlFile, schema_problems

# kube-apiserver refuses a TokenRequest for less than 10 minutes or more than 2^32 seconds.
SHORTEST_TOKEN_SECONDS = 600
LONGEST_TOKEN_SECONDS = 2**32
FIXED_BY_THE_PAGE = (
    "condition_type",
    "revocation_annotation",
    "revoked_value",
    "agent_release_annotation",
    "apiserver_url_setting",
)
# The named groups Contract.secret_named_in and Contract.expiry_named_in need (the Secret's
# namespace is optional: a message may name the Secret by its name alone, in its Target's).
PATTERN_GROUPS = {
    "message_secret_pattern": ("name",),
    "message_expiry_pattern": ("expiry",),
}
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_KEY = re.compile(rf"({_DNS_SUBDOMAIN}/)?{_NAME}")
SECRET_DATA_KEY = re.compile(r"[-._a-zA-Z0-9]{1,253}")
LONGEST_FIELD_MANAGER = 128
LONGEST_LABEL_PREFIX = 253


def _text(value: str) -> str:
    if not value.strip() or "\n" in value:
        raise ValueError("must be one line of text, not empty")
    return value


def _word(value: str) -> str:
    if not value or any(c.isspace() for c in value) or len(value) > LONGEST_FIELD_MANAGER:
        raise ValueError(f"must be one word of at most {LONGEST_FIELD_MANAGER} characters")
    return value


def _label_key(value: str) -> str:
    prefix = value.rpartition("/")[0]
    if not LABEL_KEY.fullmatch(value) or len(prefix) > LONGEST_LABEL_PREFIX:
        raise ValueError(
            f"{value!r} is not a Kubernetes label or annotation key; write prefix/name, e.g. "
            "example.com/agent-credential"
        )
    return value


def _secret_data_key(value: str) -> str:
    if not SECRET_DATA_KEY.fullmatch(value):
        raise ValueError(f"{value!r} is not a Secret data key; use letters, digits, '-', '_', '.'")
    return value


def _lifetime(value: int) -> int:
    if not SHORTEST_TOKEN_SECONDS <= value <= LONGEST_TOKEN_SECONDS:
        raise ValueError(
            f"{value} s is not a lifetime Kubernetes grants (a TokenRequest takes "
            f"{SHORTEST_TOKEN_SECONDS} to {LONGEST_TOKEN_SECONDS} s); write at least "
            f"token_lifetime_seconds = {SHORTEST_TOKEN_SECONDS}"
        )
    return value


def _fraction(value: float) -> float:
    if not 0 < value < 1:
        raise ValueError(
            f"{value} is not a fraction of the lifetime; write one between 0 and 1, e.g. 0.8"
        )
    return value


def _positive_seconds(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{value} is not a number of seconds above 0; write e.g. 1")
    return value


def _whole_seconds(least: int) -> AfterValidator:
    def check(value: int) -> int:
        if value < least:
            raise ValueError(f"{value} s is too short; write {least} or more")
        return value

    return AfterValidator(check)


Text = Annotated[str, AfterValidator(_text)]
Word = Annotated[str, AfterValidator(_word)]
LabelKey = Annotated[str, AfterValidator(_label_key)]
DataKey = Annotated[str, AfterValidator(_secret_data_key)]
Seconds = Annotated[float, AfterValidator(_positive_seconds)]


class ProfileValues(BaseModel):
    """The keys a profile may give; each is optional (the reference value stands)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    implementation_name: Text | None = None
    implementation_version: Text | None = None
    condition_type: str | None = None
    revocation_annotation: str | None = None
    revoked_value: str | None = None
    agent_release_annotation: str | None = None
    apiserver_url_setting: str | None = None
    rotation_annotation: LabelKey | None = None
    target_label: LabelKey | None = None
    credential_label: LabelKey | None = None
    release_label: LabelKey | None = None
    token_key: DataKey | None = None
    expiry_annotation: LabelKey | None = None
    issued_annotation: LabelKey | None = None
    rotation_handled_annotation: LabelKey | None = None
    token_lifetime_seconds: Annotated[int, AfterValidator(_lifetime)] | None = None
    rotate_after_fraction: Annotated[float, AfterValidator(_fraction)] | None = None
    mint_failed_event_reason: Word | None = None
    mint_backoff_initial_seconds: Seconds | None = None
    mint_backoff_cap_seconds: Seconds | None = None
    agent_field_manager: Word | None = None
    agent_image: Word | None = None
    agent_kubeconfig_key: DataKey | None = None
    report_interval_seconds: Annotated[int, _whole_seconds(1)] | None = None
    api_server_auth_cache_seconds: Annotated[int, _whole_seconds(0)] | None = None
    message_secret_pattern: str | None = None
    message_expiry_pattern: str | None = None
    grants_patch: bool | None = None

    @field_validator(*FIXED_BY_THE_PAGE)
    @classmethod
    def _fixed(cls, value: str, info: Any) -> str:
        fixed = getattr(REFERENCE, info.field_name)
        if value != fixed:
            raise ValueError(
                f"{value!r} renames what the page fixes ({fixed!r}); remove "
                f"{info.field_name} from the profile"
            )
        return value

    @field_validator(*PATTERN_GROUPS)
    @classmethod
    def _pattern(cls, value: str, info: Any) -> str:
        groups = PATTERN_GROUPS[info.field_name]
        try:
            compiled = re.compile(value)
        except re.error as error:
            raise ValueError(f"is not a regular expression ({error})") from None
        missing = [group for group in groups if group not in compiled.groupindex]
        if missing:
            named = ", ".join(f"(?P<{group}>...)" for group in groups)
            raise ValueError(
                f"has no named group {', '.join(missing)}; the harness reads {named} from it"
            )
        return value


def profile_problems(file: TomlFile) -> tuple[dict[str, Any], list[Problem]]:
    """The profile's values and every problem with them, each on the line it is written."""
    keys = [f.name for f in fields(Contract)]
    examples = {key: f"{key} = {_example(getattr(REFERENCE, key))}" for key in keys}
    try:
        ProfileValues.model_validate(file.data)
    except ValidationError as error:
        return {}, schema_problems(
            file,
            error,
            show_values=True,
            known_keys={(): keys},
            examples=examples,
            listed_in="docs/contracts.md",
        )
    return file.data, [file.problem((key,), message) for key, message in _across(file.data)]


def _across(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Rules between keys, on the profile laid over the reference values; each problem is said at
    a key the file gives."""
    merged = replace(REFERENCE, **values)
    found: list[tuple[str, str]] = []
    if merged.mint_backoff_initial_seconds > merged.mint_backoff_cap_seconds:
        key = next(
            k for k in ("mint_backoff_initial_seconds", "mint_backoff_cap_seconds") if k in values
        )
        found.append(
            (
                key,
                f"the first wait ({merged.mint_backoff_initial_seconds} s) is longer than the cap "
                f"({merged.mint_backoff_cap_seconds} s); mint_backoff_initial_seconds must not "
                "exceed mint_backoff_cap_seconds",
            )
        )
    return found


def _example(value: object) -> str:
    if isinstance(value, str):
        return '"text"'
    return str(value)
