"""For each mutant, the scenarios expected to kill it, run first so a killed mutant costs one or
two scenarios. Only a hint for speed: the run goes on through every other scenario, and the
verdict says which one actually failed (docs/mutants.md lists it)."""

from __future__ import annotations

GRANT = "The token can do exactly what the page grants"
NAMESAKE = "The token reaches nothing of a Target of the same name in another namespace"
ROTATED_GRANT = "After a rotation on request, the new token can do exactly what the page grants"
RULES = "The SolAr API server's own list of what the token may do is the page's grant"
IMPERSONATE = "The token cannot act as anyone else"
PATCH = "The agent may patch its own TargetReport"
YOU = "You create the Target"
CONTROLLER = (
    "solar-controller-manager creates a ServiceAccount, Role, RoleBinding and an empty "
    "TargetReport, and mints a token into a Secret"
)
RENDERER = "solar-renderer renders the agent release with the kubeconfig and the token"
AGENT = "The agent updates its own TargetReport"
OWNED = (
    "The ServiceAccount, Role, RoleBinding, TargetReport and token Secret are owned by the Target"
)
OUTLINE = "AgentCredentialReady is <Status> with reason <Reason>"
EXPIRY = "The Secret named in the message holds a token that expires when the message says"
LATER_URL = "Setting controller.agent.apiserverURL later issues the token"
UNSET_URL = "Unsetting controller.agent.apiserverURL withdraws the token"
RETRIES = "The controller retries a failed mint and issues the token once the cause is gone"
BACKOFF = "The waits between attempts grow up to the cap and the retries go on at the cap"
OTHER_NAMESPACE_MINT = (
    "A mint failing for one Target does not hold back the Targets of another namespace"
)
EMPTY = "lastReportTime is empty until the first report"
NOT_REVOKED = 'The annotation with the value "<value>" does not revoke'
ADVANCES = "lastReportTime advances with every report"
STAYS_EMPTY = "While lastReportTime stays empty, the agent pod's log on the target cluster says why"
WAIT_RUNS_OUT = (
    "A wait for the first report that runs out says to check the agent pod logs and shows them"
)
NO_TOKEN_IN_LOGS = "The agent pod logs that people are sent to never show the agent's token"
TWO_AGENTS = "Two Targets, two agents, each reporting with its own credential"
EVERY_TARGET = "Every Target in the namespace is bound to the agent Release"
OWN_NAMESPACE = "A Profile only matches Targets in its own namespace"
SECOND_TARGET = "Setup is once per namespace: a second Target needs nothing more"
SELECTOR = "A Profile with a label selector binds only the Targets it selects"
STATUS = "The Profile's status counts the Targets of its own namespace"
NO_REACH = "Before first contact nothing reaches the target cluster"
URL = "The URL has the form oci://<render-registry>/<namespace>/bootstrap-<target>"
ANY_TARGET = (
    "The page's objects install the agent of any Target once host, namespace and Target name "
    "are replaced"
)
FIRST_CONTACT = "First contact installs the agent"
BOUND_LATER = "A Release bound later arrives without touching the target cluster"
BEFORE_TOKEN = (
    "A Release bound before the Target's token exists does not hold the agent back by a poll"
)
EXISTING = "Binding a Release that already existed re-renders the bootstrap chart"
OWN_CHARTS = "regcred reads the Target's own charts"
OTHER_CHARTS = "regcred reads nothing in another namespace"
LOOKALIKE = "regcred reads nothing in a repository whose path only begins like its namespace"
CATALOG = "regcred learns no repository of another namespace from the catalog"
SIBLING_TOKEN = "One Target's regcred reads another Target's agent token in the same namespace"
MAY_NOT = "regcred may not <action>"
PULL_REFUSED = "A pull <who> is refused"
PUSHER = "SolAr's push user may <action>"
REVOKE = "Revoking deletes the token Secret and sets Revoked"
REVOKED_REJECTED = (
    "The revoked token is rejected within the API server's authentication cache window"
)
UNREVOKE = "Removing the annotation issues a new token and the agent reports again"
ROTATE = "A rotation on request replaces the token, and the agent picks it up through Flux"
EVERY_ROTATION = "Every rotation request replaces the token, not only the first"
BEFORE_EXPIRY = (
    "A token is rotated before it expires, once, even by a controller whose clock runs ahead"
)
EXPIRES = "Without a new token, the old one expires, the reports stop and the condition says why"
DELETE = (
    "Deleting a Target removes its ServiceAccount, Role, RoleBinding, TargetReport and token Secret"
)
FLUX_INSTALLS = (
    "Flux on the target pulls and installs the agent release, like every other bound Release"
)
MADE_AGAIN = "A Target made again under the same name is delivered its own new token"
OTHER_NAMESPACE_TOKEN = "A Target in another namespace cannot read the agent token"

OTHERS_KEPT = "Deleting a Target leaves the credentials of the other Targets as they were"
IN_PLACE = 'Changing the revocation annotation in place to "<value>" issues a new token'
OUT_OF_BAND = "A token Secret deleted out of band is replaced by one new token in a new Secret"
NAMESAKE_STEPS = (
    "<Step> a Target leaves the token of a Target of the same name in another namespace as it was"
)
NAMESAKE_UNREVOKE = (
    "Lifting a revocation leaves the token of a Target of the same name in another namespace as "
    "it was"
)
NAMESAKE_BEFORE_EXPIRY = (
    "A rotation before expiry leaves the token of a Target of the same name in another namespace "
    "as it was"
)
BEFORE_SETUP = (
    "A Target created before its namespace was set up is bound, gets its credential and is "
    "delivered"
)
LATEST_ERROR = "The MintFailed message has the error of the latest attempt"

KILLERS: dict[str, tuple[str, ...]] = {
    "controller-role-lists-targets": (GRANT,),
    "controller-role-any-targetreport": (GRANT,),
    "controller-role-report-status": (GRANT,),
    "controller-role-every-resource": (GRANT,),
    "controller-role-no-update": (AGENT,),
    "controller-role-no-get-target": (AGENT,),
    "controller-role-no-patch": (PATCH,),
    "controller-role-reads-secrets": (GRANT,),
    "controller-role-widened-on-rotation": (ROTATED_GRANT,),
    "controller-binds-whole-namespace": (GRANT,),
    "controller-binds-default-account": (CONTROLLER,),
    "controller-no-owner-references": (OWNED,),
    "controller-binds-in-other-namespaces": (GRANT,),
    "controller-no-target-report": (CONTROLLER,),
    "controller-report-named-differently": (CONTROLLER,),
    "controller-report-not-empty": (CONTROLLER, EMPTY),
    "controller-writes-report": (AGENT,),
    "controller-writes-target-spec": (YOU,),
    "controller-ignores-revocation": (OUTLINE,),
    "controller-revocation-keeps-secret": (REVOKE,),
    "controller-ignores-disabled": (OUTLINE,),
    "controller-condition-renamed": (OUTLINE,),
    "controller-message-without-expiry": (OUTLINE,),
    "controller-expiry-an-hour-off": (EXPIRY,),
    "controller-message-names-first-secret": (ROTATE,),
    "controller-mint-error-hidden": (OUTLINE,),
    "controller-mint-failed-says-disabled": (OUTLINE,),
    "controller-mint-never-retried": (RETRIES,),
    "controller-mint-no-backoff": (BACKOFF,),
    "controller-backoff-uncapped": (BACKOFF,),
    "controller-backoff-gives-up": (BACKOFF,),
    "controller-no-warning-events": (BACKOFF,),
    "controller-one-backoff-for-all": (OTHER_NAMESPACE_MINT,),
    "controller-ignores-rotation-request": (ROTATE,),
    "controller-rotates-only-once": (EVERY_ROTATION,),
    "controller-never-rotates-before-expiry": (BEFORE_EXPIRY,),
    "controller-rotation-by-server-expiry": (BEFORE_EXPIRY,),
    "controller-rotation-keeps-old-secret": (EVERY_ROTATION, ROTATE),
    "controller-mints-twice": (EVERY_ROTATION, ROTATE),
    "controller-expired-token-stays-issued": (EXPIRES,),
    "controller-token-not-bound": (CONTROLLER,),
    "controller-needs-opt-in": (CONTROLLER,),
    "conditions-keep-first-message": (EVERY_ROTATION, ROTATE),
    "conditions-never-change": (LATER_URL,),
    "renderer-sibling-token": (SECOND_TARGET, SIBLING_TOKEN),
    "renderer-mints-own-token": (AGENT,),
    "renderer-first-token-forever": (EVERY_ROTATION, ROTATE),
    "renderer-wrong-server": (RENDERER,),
    "renderer-skips-verification": (RENDERER,),
    "renderer-no-ca": (RENDERER,),
    "renderer-slow-agent": (ADVANCES,),
    "renderer-one-agent-per-namespace": (SECOND_TARGET,),
    "renderer-agent-chart-outside-namespace": (RENDERER,),
    "renderer-bootstrap-wrong-path": (URL,),
    "renderer-bootstrap-non-semver": (FIRST_CONTACT,),
    "renderer-fixed-registry-host": (FIRST_CONTACT,),
    "renderer-bootstrap-without-pull-secret": (FIRST_CONTACT,),
    "renderer-agent-only": (BOUND_LATER,),
    "renderer-misses-new-bindings": (EXISTING,),
    "renderer-renders-before-token": (BEFORE_TOKEN,),
    "renderer-applies-on-target": (NO_REACH,),
    "controller-writes-into-target": (NO_REACH,),
    "profile-binds-other-namespaces": (OWN_NAMESPACE,),
    "profile-empty-selector-matches-nothing": (EVERY_TARGET,),
    "profile-ignores-selector": (SELECTOR,),
    "profile-binds-first-target-only": (EVERY_TARGET,),
    "profile-empty-selector-matches-only-unlabelled": (EVERY_TARGET,),
    "profile-status-not-counted": (STATUS,),
    "solar-apiserver-url-read-once": (LATER_URL,),
    "agent-silent": (AGENT,),
    "agent-reports-once": (ADVANCES,),
    "agent-clock-an-hour-ahead": (ADVANCES,),
    "agent-writes-status": (AGENT,),
    "agent-logs-token": (NO_TOKEN_IN_LOGS,),
    "agent-logs-token-on-failure": (WAIT_RUNS_OUT,),
    "agent-swallows-errors": (STAYS_EMPTY,),
    "agent-caches-kubeconfig": (ROTATE,),
    # delivery: where the token and the push credentials go, what Flux pulls and when, the agent's
    # clock (tests/mutants/catalogue/hunt_delivery.py)
    "renderer-token-in-bootstrap-values": (RENDERER,),
    "renderer-copies-agent-to-other-namespaces": (OTHER_NAMESPACE_TOKEN,),
    "renderer-caches-kubeconfig-in-configmap": (AGENT,),
    "renderer-event-shows-kubeconfig": (AGENT,),
    "renderer-push-credentials-in-agent-release": (OWN_CHARTS,),
    "renderer-bootstrap-counter-ignores-registry": (MADE_AGAIN,),
    "renderer-pull-secret-always-regcred": (FIRST_CONTACT,),
    "renderer-agent-in-fixed-namespace": (FLUX_INSTALLS,),
    "renderer-releases-in-flux-system": (BEFORE_TOKEN, BOUND_LATER),
    "renderer-ignores-condition": (UNREVOKE, ROTATE),
    "policy-everyone-reads-outside-namespaces": (LOOKALIKE,),
    "policy-reader-may-write-own-namespace": (MAY_NOT,),
    "agent-clock-an-hour-behind": (ADVANCES, EXPIRES),
    "agent-annotates-report-with-token": (AGENT,),
    "agent-logs-kubeconfig-base64": (WAIT_RUNS_OUT, NO_TOKEN_IN_LOGS),
    "agent-reports-in-default-namespace": (AGENT, ADVANCES),
    "apiserver-cache-forever": (REVOKED_REJECTED,),
    "apiserver-cache-a-minute": (REVOKED_REJECTED,),
    "apiserver-no-auth-cache": (REVOKED_REJECTED,),
    "tokens-never-expire": (EXPIRES,),
    "tokens-ignore-bound-secret": (REVOKED_REJECTED,),
    "apiserver-mint-ignores-lifetime": (EXPIRY,),
    "rbac-ignores-serviceaccount-namespace": (NAMESAKE,),
    "rbac-ignores-resource-names": (GRANT,),
    "rbac-rolebindings-everywhere": (GRANT,),
    "rbac-subresource-as-parent": (GRANT,),
    "rbac-get-implies-list": (GRANT,),
    "rbac-update-implies-patch-and-delete": (GRANT,),
    "apiserver-impersonation-unchecked": (IMPERSONATE,),
    "gc-no-cascade": (DELETE,),
    "policy-readers-everywhere": (OTHER_CHARTS,),
    "policy-namespace-prefix": (LOOKALIKE,),
    "policy-readers-may-write": (MAY_NOT,),
    "policy-readers-may-overwrite": (MAY_NOT,),
    "policy-anonymous-read": (PULL_REFUSED,),
    "policy-push-user-cannot-delete": (PUSHER,),
    "policy-shortest-pattern-decides": (OWN_CHARTS,),
    "registry-any-password": (PULL_REFUSED,),
    "registry-catalog-lists-everything": (CATALOG,),
    "flux-ignores-pull-secret": (FIRST_CONTACT,),
    "flux-picks-lowest-version": (BOUND_LATER,),
    "flux-polls-rarely": (BOUND_LATER,),
    "clock-skew-ignored": (BEFORE_EXPIRY,),
    # a new token, its lifetime and audience, Disabled, revocation, a rules review that
    # under-reports (credential.py, access.py)
    "controller-rotates-in-place": (ROTATE, EVERY_ROTATION),
    "controller-token-lifetime-a-day": (EVERY_ROTATION,),
    "controller-disabled-mints-unlabelled": (OUTLINE,),
    "controller-disabled-keeps-token": (UNSET_URL,),
    "controller-status-lowercase": (OUTLINE,),
    "controller-mintfailed-hides-valid-token": (EXPIRES,),
    "controller-failed-rotation-drops-token": (EXPIRES,),
    "controller-binds-in-default-namespace": (RULES,),
    "controller-grants-metrics": (RULES,),
    "controller-token-secret-unowned": (OWNED,),
    "controller-resets-report": (AGENT, ADVANCES),
    "renderer-renders-namespace-bindings": (SELECTOR,),
    "renderer-kubeconfig-in-configmap": (RENDERER,),
    "agent-report-time-to-the-minute": (ADVANCES,),
    "agent-reports-only-on-change": (ADVANCES,),
    "agent-drops-report-owner": (AGENT, ADVANCES),
    "registry-any-known-password": (PULL_REFUSED,),
    "registry-blobs-unchecked": (OTHER_CHARTS,),
    "registry-tags-unchecked": (OTHER_CHARTS,),
    "renderer-drops-agent-on-revoke": (REVOKED_REJECTED,),
    "agent-gives-up-after-rejection": (EXPIRES,),
    "agent-stops-after-3-reports": (ADVANCES,),
    "agent-stops-after-20-reports": (ADVANCES, EXPIRES),
    "controller-revokes-on-any-value": (NOT_REVOKED,),
    "controller-revokes-on-any-non-empty-value": (NOT_REVOKED,),
    "controller-revokes-case-insensitively": (NOT_REVOKED,),
    "rules-review-hides-secrets-in-default": (GRANT,),
    "controller-mints-for-another-audience": (AGENT,),
    # the condition's lastTransitionTime, the mint backoff, the Profile controller's bindings
    # and status (tests/mutants/catalogue/hunt_controller.py)
    "controller-transition-time-on-every-change": (ROTATE,),
    "controller-transition-time-never-moves": (REVOKE,),
    "controller-backoff-by-name-only": (OTHER_NAMESPACE_MINT,),
    "controller-transition-time-of-the-target": (RETRIES, REVOKE),
    "controller-drops-other-conditions": (OUTLINE,),
    "controller-condition-appended": (OUTLINE,),
    "controller-event-about-the-serviceaccount": (BACKOFF,),
    "controller-event-normal": (BACKOFF,),
    "controller-backoff-kept-after-success": (
        "After a successful mint, the next failures back off from the initial wait again",
    ),
    "controller-deletion-takes-namesakes": (OTHERS_KEPT,),
    "controller-deletion-takes-the-namespace": (OTHERS_KEPT,),
    "controller-token-in-event": (CONTROLLER,),
    "controller-token-in-target-annotation": (CONTROLLER,),
    "controller-role-deletes-own-report": (GRANT,),
    "controller-binds-namespace-serviceaccounts": (GRANT,),
    "profile-never-unbinds": (
        "A Target that no longer carries the selected label is no longer bound",
    ),
    "profile-status-counts-bindings": (STATUS,),
    # a token's audience and lifetime, revocation, retired and namesakes' tokens, Targets made
    # before their namespace's setup, failed mints (tests/mutants/catalogue/hunt_credential.py)
    "controller-mints-for-an-extra-audience": (CONTROLLER, AGENT),
    "controller-first-token-lives-longer": (CONTROLLER, EXPIRY),
    "controller-revocation-sticks-to-the-key": (IN_PLACE,),
    "controller-old-secret-kept-a-while": (ROTATE, EVERY_ROTATION),
    "controller-revoked-secret-deleted-late": (REVOKED_REJECTED,),
    "controller-disabled-secret-deleted-late": (UNSET_URL,),
    "controller-revocation-takes-namesakes": (NAMESAKE_STEPS,),
    "controller-rotation-takes-namesakes": (NAMESAKE_STEPS,),
    "controller-age-rotation-takes-namesakes": (NAMESAKE_BEFORE_EXPIRY,),
    "controller-unrevocation-takes-namesakes": (NAMESAKE_UNREVOKE,),
    "controller-misses-deleted-secret": (OUT_OF_BAND,),
    "profile-binds-only-on-target-events": (BEFORE_SETUP,),
    "renderer-gives-up-without-registry": (BEFORE_SETUP,),
    "controller-mint-error-of-the-first-attempt": (LATEST_ERROR,),
    "controller-failed-mint-keeps-secret": (BACKOFF, EXPIRES),
    "profile-keeps-bindings-of-deleted-targets": (DELETE,),
}

# delivery: the token elsewhere in the agent release, registry reads by digest and HEAD, a
# password's near misses, lastReportTime across a restart, what is rendered and where
# (tests/mutants/catalogue/hunt_passes_delivery.py)
UNBOUND = "A Target that no longer carries the selected label is no longer bound"
AGENT_TARGET_NAMESPACE = (
    "An agent Release that names another targetNamespace has its agent run there"
)
OWN_REGISTRY = (
    "The Target's render registry is the Registry it references, whatever other Registries its "
    "namespace holds"
)
KILLERS.update(
    {
        "renderer-agent-token-in-configmap": (RENDERER, FLUX_INSTALLS),
        "renderer-agent-token-in-env": (RENDERER, FLUX_INSTALLS),
        "renderer-agent-token-in-pod-annotation": (RENDERER, FLUX_INSTALLS),
        "renderer-agent-kubeconfig-copied-to-default": (RENDERER, FLUX_INSTALLS),
        "renderer-agent-token-in-values": (RENDERER,),
        "renderer-agent-token-in-chart-annotations": (RENDERER,),
        "renderer-kubeconfig-in-every-release": (RENDERER, FLUX_INSTALLS),
        "registry-manifests-by-digest-unchecked": (OTHER_CHARTS, PULL_REFUSED),
        "registry-head-unchecked": (OTHER_CHARTS, PULL_REFUSED),
        "registry-password-ignores-case": (PULL_REFUSED,),
        "registry-password-accepts-its-prefix": (PULL_REFUSED,),
        "registry-password-ignores-what-follows": (PULL_REFUSED,),
        "agent-empties-report-on-start": (UNREVOKE, ROTATE),
        "agent-first-report-an-hour-behind": (ADVANCES,),
        "renderer-keeps-unbound-releases": (UNBOUND,),
        "renderer-ignores-target-namespace": (BEFORE_TOKEN, BOUND_LATER),
        "renderer-agent-ignores-target-namespace": (AGENT_TARGET_NAMESPACE,),
        "renderer-inner-helmrelease-wrong-namespace": (BEFORE_TOKEN, AGENT_TARGET_NAMESPACE),
        "renderer-release-chart-points-nowhere": (BEFORE_TOKEN, BOUND_LATER),
        "renderer-first-registry-of-namespace": (OWN_REGISTRY,),
    }
)
