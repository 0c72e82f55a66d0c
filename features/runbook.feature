@defined-here
Feature: Rotating and revoking a credential (the runbook)
  The page links to a runbook that does not exist yet. This is the harness's
  definition of it; an installed SolAr is held to it only where it says so.

  Revoke: annotate the Target with solar.opendefense.cloud/agent-credential:
  revoked. The token Secret is deleted, the condition becomes Revoked, and the
  old token is rejected. Only that value revokes, written as the page writes it:
  another value, another spelling or an empty one leaves the credential Issued.
  The agent release stays delivered: the agent keeps running and says that it
  is rejected. Removing the annotation issues a new token, and so does changing
  its value in place to anything but revoked: any other value is no revocation.

  Rotate: a fresh token replaces the old one, on request (annotation
  solar.opendefense.cloud/rotate-credential with a new value) and before the
  token expires. The agent picks it up through Flux; the old token stops working.
  Every new token comes with exactly one TokenRequest, lives for the profile's
  token lifetime, and the Issued message names the Secret that now holds it and
  its expiry.

  A token that cannot be replaced keeps working until it expires; then it stops
  working, the reports stop, and the condition says why.

  A token Secret deleted out of band is noticed: one new token is minted into a
  new Secret and named in the condition; the old token, whose Secret is gone, is
  rejected.

  Deleting a Target deletes its credential: the objects are owned by the Target,
  and its ReleaseBindings go with it.

  A step of one Target's lifecycle (revoking, lifting a revocation, rotating on
  request or before expiry, deleting) leaves every other Target's token as it
  was, also that of a Target of the same name in another namespace.

  A real API server caches successful token authentications for 10 seconds, so
  a token whose Secret is deleted still works for up to 10 seconds: "rejected"
  below always means "rejected within that window", counted from the moment
  what retires the token is visible: the condition names the new Secret, the
  revocation annotation is set, the Target's deletion is requested,
  controller.agent.apiserverURL is unset, the token Secret is deleted. When
  SolAr then deletes the old Secret is up to SolAr, but not beyond that window.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And I have created the Target "cluster-1" in namespace "test"
    And I have run the first-contact step for "cluster-1"
    And the TargetReport "cluster-1" gets a lastReportTime
    And the agent of "cluster-1" holds its token
    And AgentCredentialReady of "cluster-1" is "True" with reason "Issued"

  @fault
  Rule: Revoke

    Scenario: Revoking deletes the token Secret and sets Revoked
      When I annotate the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked"
      Then AgentCredentialReady of "cluster-1" is "False" with reason "Revoked"
      And no token Secret of "cluster-1" exists

    @needs-agent-logs
    Scenario: The revoked token is rejected within the API server's authentication cache window
      When I annotate the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked"
      Then the old token of "cluster-1" is rejected within the authentication cache window
      And the agent's log says that the SolAr API server rejects its credential
      And the bootstrap chart of "cluster-1" in the render registry still carries the agent release

    @needs-audit-log
    Scenario: Removing the annotation issues a new token and the agent reports again
      Given I have annotated the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked"
      And the old token of "cluster-1" is rejected within the authentication cache window
      And AgentCredentialReady of "cluster-1" is "False" with reason "Revoked"
      When I remove the annotation "solar.opendefense.cloud/agent-credential" from the Target "cluster-1"
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And Flux on the target upgrades the agent release of "cluster-1"
      And the lastReportTime of "cluster-1" advances with the next report
      And solar-controller-manager has minted exactly one new token for "cluster-1"

    @needs-audit-log
    Scenario Outline: Changing the revocation annotation in place to "<value>" issues a new token
      Given I have annotated the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked"
      And AgentCredentialReady of "cluster-1" is "False" with reason "Revoked"
      When I annotate the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: <value>"
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the agent release of "cluster-1" in the render registry carries the new token
      And solar-controller-manager has minted exactly one new token for "cluster-1"

      Examples:
        | value   |
        | Revoked |
        | true    |
        |         |

  Rule: Only the value revoked revokes

    Scenario Outline: The annotation with the value "<value>" does not revoke
      When I annotate the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: <value>"
      Then the credential of "cluster-1" stays Issued and its agent keeps reporting with the same token, for as long as a revocation may take

      Examples:
        | value   |
        | Revoked |
        | REVOKED |
        | true    |
        | revoke  |
        |         |

  Rule: Rotate

    @needs-audit-log
    Scenario: A rotation on request replaces the token, and the agent picks it up through Flux
      When I request a new credential for "cluster-1"
      Then the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the old token of "cluster-1" is rejected within the authentication cache window
      And the agent release of "cluster-1" in the render registry carries the new token
      And Flux on the target upgrades the agent release of "cluster-1"
      And the target cluster holds the token of "cluster-1" only in the kubeconfig Secret of its agent release
      And the lastReportTime of "cluster-1" advances with the next report
      And solar-controller-manager has minted exactly one new token for "cluster-1"
      And the lastTransitionTime of AgentCredentialReady of "cluster-1" has not moved, as its status stayed "True"

    @needs-audit-log
    Scenario: Every rotation request replaces the token, not only the first
      Given I have requested a new credential for "cluster-1"
      And the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the agent of "cluster-1" holds its token
      When I request a new credential for "cluster-1"
      Then the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the old token of "cluster-1" is rejected within the authentication cache window
      And the new token lives for the profile's token lifetime
      And solar-controller-manager has minted exactly one new token for "cluster-1"

    @fault @needs-skew-controller-clock @needs-audit-log
    Scenario: A token is rotated before it expires, once, even by a controller whose clock runs ahead
      When the clock of solar-controller-manager passes the age at which a token is rotated
      Then the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the old token of "cluster-1" is rejected within the authentication cache window
      And the new token expires later than the old one
      And Flux on the target upgrades the agent release of "cluster-1"
      And the lastReportTime of "cluster-1" advances with the next report
      And solar-controller-manager has minted exactly one new token for "cluster-1"

  @fault
  Rule: A token that cannot be replaced stops working when it expires

    @needs-deny-token-requests @needs-audit-log @needs-agent-logs
    Scenario: Without a new token, the old one expires, the reports stop and the condition says why
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      When the token of "cluster-1" has lived past the age at which it is rotated
      Then the SolAr API server has refused 2 token requests for the agent of "cluster-1"
      And AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And no Secret made for "cluster-1" is left without a token the SolAr API server accepts
      When the token of "cluster-1" expires
      Then the old token of "cluster-1" is rejected from its expiry on
      And the lastReportTime of "cluster-1" stops at the token's expiry
      And AgentCredentialReady of "cluster-1" is "False" with reason "MintFailed"
      And the condition message has the error "tokens are paused by policy"

  Rule: A token Secret deleted out of band is replaced

    @needs-audit-log
    Scenario: A token Secret deleted out of band is replaced by one new token in a new Secret
      When someone deletes the token Secret of "cluster-1"
      Then the old token of "cluster-1" is rejected within the authentication cache window
      And the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And solar-controller-manager has minted exactly one new token for "cluster-1"
      And the agent release of "cluster-1" in the render registry carries the new token

  Rule: Deleting a Target deletes its credential

    Scenario: Deleting a Target removes its ServiceAccount, Role, RoleBinding, TargetReport and token Secret
      When I delete the Target "cluster-1"
      Then the old token of "cluster-1" is rejected within the authentication cache window
      And the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "cluster-1" are gone
      And no ReleaseBinding binds a Target "cluster-1" in namespace "test" any more

    Scenario: A Target made again under the same name is delivered its own new token
      Given the token of "cluster-1" has been replaced 3 times, each new one delivered to the render registry
      When I delete the Target "cluster-1"
      And I create the Target "cluster-1" in namespace "test"
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the agent release of "cluster-1" in the render registry carries the new token

    Scenario: Deleting a Target leaves the credentials of the other Targets as they were
      Given namespace "other" holds no solar-agent setup
      And a Target of the same name, "cluster-1", in namespace "other" has its own credential
      And I have created the Target "cluster-2" in namespace "test"
      And every Target I have created holds a token
      When I delete the Target "cluster-1"
      Then the old token of "cluster-1" is rejected within the authentication cache window
      And every Target but "cluster-1" in namespace "test" keeps the Secret and the token it held, and the SolAr API server accepts that token

  Rule: One Target's lifecycle leaves a Target of the same name in another namespace as it was

    Scenario Outline: <Step> a Target leaves the token of a Target of the same name in another namespace as it was
      Given namespace "other" holds no solar-agent setup
      And a Target of the same name, "cluster-1", in namespace "other" has its own credential
      And every Target I have created holds a token
      When <action>
      Then <evidence>
      And the old token of "cluster-1" is rejected within the authentication cache window
      And every Target but "cluster-1" in namespace "test" keeps the Secret and the token it held, and the SolAr API server accepts that token

      Examples:
        | Step                    | action                                                                                   | evidence                                                                                                       |
        | Revoking                | I annotate the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked" | AgentCredentialReady of "cluster-1" is "False" with reason "Revoked"                                           |
        | Rotating on request     | I request a new credential for "cluster-1"                                               | the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry     |

    Scenario: Lifting a revocation leaves the token of a Target of the same name in another namespace as it was
      Given namespace "other" holds no solar-agent setup
      And a Target of the same name, "cluster-1", in namespace "other" has its own credential
      And every Target I have created holds a token
      And I have annotated the Target "cluster-1" with "solar.opendefense.cloud/agent-credential: revoked"
      And AgentCredentialReady of "cluster-1" is "False" with reason "Revoked"
      When I remove the annotation "solar.opendefense.cloud/agent-credential" from the Target "cluster-1"
      Then the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And every Target but "cluster-1" in namespace "test" keeps the Secret and the token it held, and the SolAr API server accepts that token

    @fault @needs-deny-token-requests @needs-skew-controller-clock @needs-audit-log
    Scenario: A rotation before expiry leaves the token of a Target of the same name in another namespace as it was
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And the clock of solar-controller-manager has passed the age at which a token is rotated
      And the SolAr API server has refused 2 token requests for the agent of "cluster-1"
      And namespace "other" holds no solar-agent setup
      And a Target of the same name, "cluster-1", in namespace "other" has its own credential
      And every Target I have created holds a token
      When the SolAr API server accepts token requests again
      Then the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the old token of "cluster-1" is rejected within the authentication cache window
      And every Target but "cluster-1" in namespace "test" keeps the Secret and the token it held, and the SolAr API server accepts that token
