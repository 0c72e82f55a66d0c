Feature: What happens when you create a Target
  Every Target gets its own solar-agent. The agent reports the state of the
  target cluster back to SolAr by updating one TargetReport.

  An operator must set up the agent once in each namespace that holds Targets.
  If that is done, you only create the Target and run the first-contact step.

  | Step                                                                                                     | Owner                    |
  | Create the Target                                                                                        | you                      |
  | Create one agent Release (annotated target-credential) and one Profile with an empty selector, once per namespace | operator |
  | Create a ServiceAccount, Role, RoleBinding and an empty TargetReport; mint a token into a Secret          | solar-controller-manager |
  | Render the agent release with the kubeconfig and the token                                               | solar-renderer           |
  | Pull and install, like every other bound Release                                                         | Flux on the target       |
  | Update its own TargetReport                                                                              | the agent                |

  The Profile has an empty targetSelector, so it matches every Target in the
  namespace. The agent Release is bound to your new Target without further steps.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"

  @spec
  Rule: Each step of the table is done by its owner

    Scenario: You create the Target
      When I create the Target "cluster-1" in namespace "test"
      Then the SolAr API has accepted the Target "cluster-1"
      And once SolAr has acted on the Target "cluster-1", it still holds what I wrote
      And the Target "cluster-1" is the only object I have written

    Scenario: The operator creates one agent Release and one Profile with an empty selector, once per namespace
      Then namespace "test" holds exactly one Release annotated target-credential
      And namespace "test" holds exactly one Profile with an empty targetSelector that references it

    Scenario: solar-controller-manager creates a ServiceAccount, Role, RoleBinding and an empty TargetReport, and mints a token into a Secret
      When I create the Target "cluster-1" in namespace "test"
      Then solar-controller-manager mints a token for "cluster-1" into a Secret
      And the token authenticates as a ServiceAccount that a RoleBinding binds to a Role for "cluster-1"
      And solar-controller-manager creates an empty TargetReport "cluster-1"
      And the token of "cluster-1" is in no other object on the SolAr API server

    Scenario: solar-renderer renders the agent release with the kubeconfig and the token
      Given the operator has bound the Release "podinfo" to "cluster-1" in namespace "test"
      When I create the Target "cluster-1" in namespace "test"
      Then solar-renderer pushes the agent release of "cluster-1" to the render registry
      And the agent release of "cluster-1" holds a kubeconfig for the SolAr API with the token from its Secret
      And that kubeconfig trusts the SolAr API server's certificate authority and does not skip verification
      And solar-renderer pushes a bootstrap chart of "cluster-1" that carries the Release "podinfo"
      And the render registry holds the token of "cluster-1" only in the kubeconfig Secret of its agent release

    Scenario: Flux on the target pulls and installs the agent release, like every other bound Release
      Given I have created the Target "cluster-1" in namespace "test"
      And the operator has bound the Release "podinfo" to "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then Flux on the target installs the agent release of "cluster-1"
      And Flux on the target reports every bound Release of "cluster-1" as Ready
      And the target cluster holds the token of "cluster-1" only in the kubeconfig Secret of its agent release

    @needs-audit-log
    Scenario: The agent updates its own TargetReport
      Given I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then the TargetReport "cluster-1" gets a lastReportTime
      And the lastReportTime of "cluster-1" was written by the agent with its own token
      And the token of "cluster-1" is in no other object on the SolAr API server

  @spec
  Rule: From Target creation to an advancing lastReportTime

    Scenario: A new Target reports through its own agent
      When I create the Target "cluster-1" in namespace "test"
      And I run the first-contact step for "cluster-1"
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And Flux on the target installs the agent release of "cluster-1"
      And the TargetReport "cluster-1" gets a lastReportTime
      And the lastReportTime of "cluster-1" advances with the next report

  @spec
  Rule: Every Target gets its own solar-agent

    @needs-audit-log @needs-agent-logs
    Scenario: Two Targets, two agents, each reporting with its own credential
      Given the operator has set up the solar-agent in namespace "other"
      And I have created the Target "cluster-1" in namespace "test"
      And I have created the Target "cluster-3" in namespace "other"
      When I run the first-contact step for "cluster-1"
      And I run the first-contact step for "cluster-3"
      Then an agent pod of "cluster-1" and an agent pod of "cluster-3" run on the target cluster
      And the TargetReport "cluster-1" gets a lastReportTime
      And the TargetReport "cluster-3" gets a lastReportTime
      And the lastReportTime of "cluster-1" was written by the agent with its own token
      And the lastReportTime of "cluster-3" was written by the agent with its own token
      And the target cluster holds the token of "cluster-1" only in the kubeconfig Secret of its agent release
      And the target cluster holds the token of "cluster-3" only in the kubeconfig Secret of its agent release

  @spec
  Rule: The Profile has an empty targetSelector, so it matches every Target in the namespace

    Scenario: Every Target in the namespace is bound to the agent Release
      When I create the Targets "cluster-1", "cluster-2" and "cluster-3" in namespace "test"
      And I create the Target "cluster-4" in namespace "test" labelled "tier=edge"
      Then each of "cluster-1", "cluster-2", "cluster-3" and "cluster-4" is bound to the agent Release

    Scenario: A Profile only matches Targets in its own namespace
      Given namespace "other" holds no solar-agent setup
      When I create the Target "cluster-9" in namespace "other"
      And I create the Target "cluster-1" in namespace "test"
      Then "cluster-1" is bound to the agent Release
      And solar-controller-manager mints a token for "cluster-9" into a Secret
      And "cluster-9" is bound to no Release
      And every ReleaseBinding in namespace "test" is for a Target of that namespace

    Scenario: The agent Release is bound to a new Target without further steps
      When I create the Target "cluster-1" in namespace "test"
      Then "cluster-1" is bound to the agent Release
      And the Target "cluster-1" is the only object I have written

    @needs-audit-log
    Scenario: Setup is once per namespace: a second Target needs nothing more
      Given I have created the Target "cluster-1" in namespace "test"
      And "cluster-1" is bound to the agent Release
      When I create the Target "cluster-2" in namespace "test"
      And I run the first-contact step for "cluster-2"
      Then "cluster-2" is bound to the agent Release
      And namespace "test" holds exactly one Release annotated target-credential
      And the TargetReport "cluster-2" gets a lastReportTime
      And the lastReportTime of "cluster-2" was written by the agent with its own token

  @defined-here
  Rule: Targets created before the operator set up their namespace are served once it is

    @needs-audit-log
    Scenario: A Target created before its namespace was set up is bound, gets its credential and is delivered
      Given namespace "other" holds no solar-agent setup
      And I have created the Target "cluster-9" in namespace "other"
      And AgentCredentialReady of "cluster-9" is "True" with reason "Issued"
      When the operator sets up the solar-agent in namespace "other"
      And I run the first-contact step for "cluster-9"
      Then "cluster-9" is bound to the agent Release
      And the TargetReport "cluster-9" gets a lastReportTime
      And the lastReportTime of "cluster-9" was written by the agent with its own token

  @defined-here
  Rule: The credential's objects belong to the Target, and the Profile counts what it matches

    Scenario: The ServiceAccount, Role, RoleBinding, TargetReport and token Secret are owned by the Target
      When I create the Target "cluster-1" in namespace "test"
      Then solar-controller-manager mints a token for "cluster-1" into a Secret
      And the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "cluster-1" are owned by the Target

    Scenario: A Profile with a label selector binds only the Targets it selects
      Given the operator has a Profile for the Release "podinfo" in namespace "test" that selects "tier=edge"
      When I create the Target "cluster-1" in namespace "test" labelled "tier=edge"
      And I create the Target "cluster-2" in namespace "test"
      Then "cluster-1" is bound to the Release "podinfo"
      And "cluster-2" is bound to the agent Release
      And "cluster-2" is not bound to the Release "podinfo"
      And the bootstrap charts of "cluster-1" and "cluster-2" carry exactly the Releases bound to each

    Scenario: A Target that no longer carries the selected label is no longer bound
      Given the operator has a Profile for the Release "podinfo" in namespace "test" that selects "tier=edge"
      And I have created the Target "cluster-1" in namespace "test" labelled "tier=edge"
      And "cluster-1" is bound to the Release "podinfo"
      And solar-renderer has pushed a bootstrap chart of "cluster-1" that carries the Release "podinfo"
      When I remove the label "tier" from the Target "cluster-1"
      Then "cluster-1" is no longer bound to the Release "podinfo"
      And "cluster-1" is bound to the agent Release
      And the bootstrap chart of "cluster-1" in the render registry no longer carries the Release "podinfo"

    Scenario: The Profile's status counts the Targets of its own namespace
      Given namespace "other" holds no solar-agent setup
      When I create the Target "cluster-9" in namespace "other"
      And I create the Targets "cluster-1" and "cluster-2" in namespace "test"
      Then the Profile of namespace "test" matches only the Targets of its own namespace

  @defined-here
  Rule: Like every other bound Release, the agent release is installed into its Release's targetNamespace

    Scenario: An agent Release that names another targetNamespace has its agent run there
      Given the operator has set the targetNamespace of the agent Release in namespace "test" to "agents"
      And I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then Flux on the target installs the agent release of "cluster-1"
      And the TargetReport "cluster-1" gets a lastReportTime
      And the target cluster holds the token of "cluster-1" only in the kubeconfig Secret of its agent release
