Feature: The credential's scope
  The credential only allows the agent to read its own Target and to read and
  update its own TargetReport.

  Every check below uses the agent's token itself against the SolAr API server:
  the token that solar-controller-manager minted into the Secret named in the
  Target's condition, in a client that carries nothing else.

  "Only" is checked for everything the SolAr API server serves: the harness asks
  it for every resource and subresource (discovery) and tries get, list, watch,
  create, update, patch, delete and deletecollection on each: on the Target's
  own objects, on another Target's objects, on a new name, on the whole
  namespace, in another namespace that holds a Target, in every other namespace
  the SolAr API server holds, across all namespaces and at the cluster scope. Writes are sent as dry runs: the API server decides
  who may write before it looks at dry run, so nothing changes even where a
  SolAr lets too much through. To read its own Target or TargetReport, the agent
  may also list and watch it narrowed to its name (Kubernetes reads by get, list
  and watch); a list or watch of more than that object is more than reading it.
  Beyond the page's grant, the token may do only
  what Kubernetes lets every authenticated user do: ask who it is and what it
  may do (the list is in docs/contracts.md). The API server's own list of what
  the token may do is asked for in every namespace it holds, not only in those
  of the scenario.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And the operator has set up the solar-agent in namespace "other"
    And I have created the Target "cluster-1" in namespace "test"
    And I have created the Target "cluster-2" in namespace "test"
    And I have created the Target "cluster-3" in namespace "other"
    And AgentCredentialReady of "cluster-2" is "True" with reason "Issued"
    And AgentCredentialReady of "cluster-3" is "True" with reason "Issued"
    And the agent of "cluster-1" holds its token

  @spec
  Rule: The credential allows the agent to read its own Target and to read and update its own TargetReport, and nothing else

    Scenario: The token can do exactly what the page grants
      When the agent of "cluster-1" tries every verb on every resource the SolAr API server serves
      Then the SolAr API server allows exactly this, beyond what it allows every authenticated user:
        | verbs       | on                   | allowed                                                       |
        | get         | its own Target       | yes                                                           |
        | get, update | its own TargetReport | yes                                                           |
        | patch       | its own TargetReport | either: the rule "update includes patch" decides              |
        | list, watch | its own Target       | either: reading it by its name may also list and watch it     |
        | list, watch | its own TargetReport | either: reading it by its name may also list and watch it     |

    Scenario: The SolAr API server's own list of what the token may do is the page's grant
      When the agent of "cluster-1" asks the SolAr API server what it may do in namespaces "test" and "other"
      Then in "test" the list is exactly this, beyond what every authenticated user may do:
        | verbs       | on                   | allowed                                                       |
        | get         | its own Target       | yes                                                           |
        | get, update | its own TargetReport | yes                                                           |
        | patch       | its own TargetReport | either: the rule "update includes patch" decides              |
        | list, watch | its own Target       | either: reading it by its name may also list and watch it     |
        | list, watch | its own TargetReport | either: reading it by its name may also list and watch it     |
      And in "other" the list is only what every authenticated user may do
      And in every other namespace of the SolAr cluster the list is only what every authenticated user may do

  @spec
  Rule: Its own Target is the one in its own namespace, even where another namespace has a Target of the same name

    Scenario: The token reaches nothing of a Target of the same name in another namespace
      Given a Target of the same name, "cluster-1", in namespace "other" has its own credential
      When the agent of "cluster-1" tries every verb on every resource the SolAr API server serves
      Then the SolAr API server allows exactly this, beyond what it allows every authenticated user:
        | verbs       | on                   | allowed                                                       |
        | get         | its own Target       | yes                                                           |
        | get, update | its own TargetReport | yes                                                           |
        | patch       | its own TargetReport | either: the rule "update includes patch" decides              |
        | list, watch | its own Target       | either: reading it by its name may also list and watch it     |
        | list, watch | its own TargetReport | either: reading it by its name may also list and watch it     |

  @defined-here
  Rule: The credential's scope holds for every token it gets: a rotation on request issues a token that may do no more than the first

    Scenario: After a rotation on request, the new token can do exactly what the page grants
      Given I have requested a new credential for "cluster-1"
      And the condition message names the Secret that now holds the new token of "cluster-1" and that token's expiry
      And the agent of "cluster-1" holds its token
      When the agent of "cluster-1" tries every verb on every resource the SolAr API server serves
      Then the SolAr API server allows exactly this, beyond what it allows every authenticated user:
        | verbs       | on                   | allowed                                                       |
        | get         | its own Target       | yes                                                           |
        | get, update | its own TargetReport | yes                                                           |
        | patch       | its own TargetReport | either: the rule "update includes patch" decides              |
        | list, watch | its own Target       | either: reading it by its name may also list and watch it     |
        | list, watch | its own TargetReport | either: reading it by its name may also list and watch it     |

  @spec
  Rule: The token cannot give itself more than that

    Scenario: The token cannot act as anyone else
      When the agent of "cluster-1" sends requests as another user, as a group, as another Target's ServiceAccount, with a uid and with extra user information
      Then the SolAr API server refuses each impersonation

    Scenario: The token cannot get a new token, not even for its own ServiceAccount
      When the agent of "cluster-1" requests a token for its own ServiceAccount
      Then the SolAr API server forbids it

    Scenario: The token cannot bind or escalate roles
      When the agent of "cluster-1" asks whether it may bind or escalate roles and impersonate
      Then the SolAr API server answers no to each
      And a RoleBinding that gives the agent of "cluster-1" the ClusterRole "cluster-admin" is refused

  @defined-here
  Rule: update includes patch: the harness reads "update its own TargetReport" as update and patch

    Scenario: The agent may patch its own TargetReport
      When the agent of "cluster-1" patches its own TargetReport
      Then the SolAr API server allows it
