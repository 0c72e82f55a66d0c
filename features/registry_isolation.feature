Feature: Registry isolation
  The pull credentials in regcred should only reach this Target's namespace in
  the registry. They can still read the agent token of every other Target in
  that namespace, because those Targets share one chart repository. Targets
  that must not read each other's tokens belong in separate namespaces.

  The render registry enforces one access policy, written in zot's
  accessControl format: SolAr's push user may write everywhere, and each
  namespace's pull user may only read <namespace>/**. "Refuses" means the pull
  and each read of the repository on its own: its tag list, every manifest by
  its tag and by its digest, and every blob, each with a GET and a HEAD.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And the operator has set up the solar-agent in namespace "other"
    And I have created the Target "cluster-1" in namespace "test"
    And I have created the Target "cluster-2" in namespace "test"
    And I have created the Target "cluster-3" in namespace "other"
    And solar-renderer has pushed the agent releases of "cluster-1", "cluster-2" and "cluster-3"

  @spec
  Rule: regcred reaches only its Target's namespace in the registry

    Scenario: regcred reads the Target's own charts
      When I pull the bootstrap chart of "cluster-1" with the regcred of "cluster-1"
      Then the render registry hands it out
      And nothing the regcred of "cluster-1" can read holds SolAr's push credentials

    Scenario: regcred reads nothing in another namespace
      When I pull the bootstrap chart of "cluster-3" with the regcred of "cluster-1"
      Then the render registry refuses it

    Scenario: regcred reads nothing in a repository whose path only begins like its namespace
      Given SolAr's push user has pushed a chart to a repository whose path begins with the name of namespace "test"
      When I pull that chart with the regcred of "cluster-1"
      Then the render registry refuses it

    Scenario: regcred learns no repository of another namespace from the catalog
      When I ask for the catalog with the regcred of "cluster-1"
      Then the render registry lists the repositories of namespace "test" and none of another namespace

    Scenario: Flux with regcred cannot pull another namespace's chart
      Given I have run the first-contact step for "cluster-1"
      When I point an OCIRepository with the regcred of "cluster-1" at the bootstrap chart of "cluster-3"
      Then that OCIRepository on the target is not Ready and says the registry refused it

  @spec
  Rule: regcred can still read the agent token of every other Target in that namespace

    Scenario: One Target's regcred reads another Target's agent token in the same namespace
      When I pull the agent release of "cluster-2" with the regcred of "cluster-1"
      Then the render registry hands it out
      And it holds the agent token of "cluster-2"

  @spec
  Rule: Targets that must not read each other's tokens belong in separate namespaces

    Scenario: A Target in another namespace cannot read the agent token
      When I pull the agent release of "cluster-3" with the regcred of "cluster-1"
      Then the render registry refuses it
      And the render registry holds the token of "cluster-1", "cluster-2" and "cluster-3" only in the kubeconfig Secret of their agent releases

  @defined-here
  Rule: regcred only reads; nobody without a registry user reads anything

    Scenario Outline: regcred may not <action>
      When I try to <action> with the regcred of "cluster-1"
      Then the render registry refuses it
      And the render registry still holds what it held

      Examples:
        | action                                         |
        | overwrite the agent release of "cluster-1"     |
        | push a new chart to namespace "test"           |
        | push a new chart to namespace "other"          |
        | push a new chart outside any namespace         |
        | delete the bootstrap chart of "cluster-1"      |

    Scenario Outline: A pull <who> is refused
      When I pull the bootstrap chart of "cluster-1" <who>
      Then the render registry refuses it

      Examples:
        | who                                                                               |
        | without credentials                                                               |
        | with a wrong password for regcred's user                                          |
        | with regcred's password in another case                                           |
        | with regcred's password one character short                                       |
        | with regcred's password and one character more                                    |
        | with regcred's user and the password of the pull user of namespace "other"        |

  @defined-here
  Rule: SolAr's push user may write everywhere

    Scenario Outline: SolAr's push user may <action>
      When SolAr's push user tries to <action>
      Then the render registry accepts it

      Examples:
        | action                                     |
        | overwrite the agent release of "cluster-1" |
        | push a new chart to namespace "test"       |
        | push a new chart to namespace "other"      |
        | push a new chart outside any namespace     |
        | delete the bootstrap chart of "cluster-3"  |
