"""The implementation profile: every name the page does not fix, with the reference defaults.

The page fixes the condition type, its reasons, the revocation annotation and the
`target-credential` annotation. Everything else (labels, Secret keys, token lifetime, message
format, rotation trigger) is this harness's definition. An installed SolAr that chose other names
is checked by loading a profile file with its values, not by changing steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from solar_conformance.core.clock import parse_utc
from solar_conformance.core.inputs import BadInput, read_toml


@dataclass(frozen=True)
class Contract:
    # Who this profile describes, for the conformance report ("" = the harness's reference SolAr
    # for --solar-impl=reference, an unnamed installed SolAr for --solar-impl=external).
    implementation_name: str = ""
    implementation_version: str = ""
    # Fixed by the page.
    condition_type: str = "AgentCredentialReady"
    revocation_annotation: str = "solar.opendefense.cloud/agent-credential"
    revoked_value: str = "revoked"
    agent_release_annotation: str = "solar.opendefense.cloud/target-credential"
    apiserver_url_setting: str = "controller.agent.apiserverURL"
    # Defined here (the "Setting up the solar-agent" and "runbook" pages do not exist yet).
    rotation_annotation: str = "solar.opendefense.cloud/rotate-credential"
    target_label: str = "solar.opendefense.cloud/target"
    credential_label: str = "solar.opendefense.cloud/agent-credential"
    release_label: str = "solar.opendefense.cloud/release"
    token_key: str = "token"
    expiry_annotation: str = "solar.opendefense.cloud/token-expires-at"
    issued_annotation: str = "solar.opendefense.cloud/token-issued-at"
    rotation_handled_annotation: str = "solar.opendefense.cloud/rotation-handled"
    # kube-apiserver's shortest TokenRequest lifetime: a run can watch a token expire.
    token_lifetime_seconds: int = 600
    rotate_after_fraction: float = 0.8
    mint_failed_event_reason: str = "MintFailed"
    mint_backoff_initial_seconds: float = 1.0
    mint_backoff_cap_seconds: float = 30.0
    agent_field_manager: str = "solar-agent"
    agent_image: str = "solar-agent"
    agent_kubeconfig_key: str = "kubeconfig"
    report_interval_seconds: int = 5
    api_server_auth_cache_seconds: int = 10
    # Groups: `name`, and `namespace` unless the message names the Secret by its name alone
    # (then it is the Target's namespace).
    message_secret_pattern: str = r"Secret (?P<namespace>[a-z0-9.-]+)/(?P<name>[a-z0-9.-]+)"
    # Group `expiry`: an RFC 3339 time in any of its forms (Z or an offset, a fraction or none).
    message_expiry_pattern: str = (
        r"expires at (?P<expiry>\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d))"
    )
    # Whether the agent's Role grants patch on its TargetReport besides update: the harness reads
    # the page's "update" as update and patch (docs/contracts.md, "The credential's scope").
    grants_patch: bool = True

    def secret_named_in(self, message: str, namespace: str = "") -> tuple[str, str] | None:
        """(namespace, name) of the Secret the Issued message names; `namespace`, the Target's,
        where the message names the Secret by its name alone."""
        found = re.search(self.message_secret_pattern, message)
        if found is None:
            return None
        named = found.groupdict()
        return (named.get("namespace") or namespace, str(named["name"]))

    def expiry_text_in(self, message: str) -> str | None:
        """The expiry as the Issued message writes it (what the expiry pattern's group holds)."""
        found = re.search(self.message_expiry_pattern, message)
        return str(found["expiry"]) if found else None

    def expiry_named_in(self, message: str) -> datetime | None:
        """The expiry the Issued message names; ValueError when it is no RFC 3339 time."""
        text = self.expiry_text_in(message)
        return parse_utc(text) if text is not None else None

    def credential_labels(self, target: str) -> dict[str, str]:
        return {self.target_label: target, self.credential_label: "true"}

    @classmethod
    def load(cls, path: Path | None) -> Contract:
        """The reference profile, with the values of a TOML file laid over it. BadProfile (one
        line per problem: file, line, key, what to write) when the file cannot be used."""
        base = cls()
        if path is None:
            return base
        from solar_conformance.core.contract_schema import profile_problems

        try:
            file = read_toml(path, "a TOML implementation profile (docs/contracts.md)")
        except BadInput as bad:
            raise BadProfile(bad.problems) from None
        values, problems = profile_problems(file)
        if problems:
            raise BadProfile(problems)
        return replace(base, **values)


class BadProfile(BadInput):
    """An implementation profile the harness refuses."""


REFERENCE = Contract()
