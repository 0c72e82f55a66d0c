@spec
Feature: The credential's scope
  The credential only allows the agent to read its own Target and to read and
  update its own TargetReport.

  Every check below uses the agent's token itself against the SolAr API server:
  the token that solar-controller-manager minted into the Secret named in the
  Target's condition, in a client that carries nothing else.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And the operator has set up the solar-agent in namespace "other"
    And I have created the Target "cluster-1" in namespace "test"
    And I have created the Target "cluster-2" in namespace "test"
    And I have created the Target "cluster-3" in namespace "other"
    And the agent of "cluster-1" holds its token

  Rule: The credential allows the agent to read its own Target and to read and update its own TargetReport

    Scenario Outline: The agent may <action>
      When the agent of "cluster-1" tries to <action>
      Then the SolAr API server allows it

      Examples:
        | action                           |
        | get its own Target               |
        | get its own TargetReport         |
        | update its own TargetReport      |
        | patch its own TargetReport       |

  Rule: The credential allows nothing else

    Scenario Outline: The agent may not <action>
      When the agent of "cluster-1" tries to <action>
      Then the SolAr API server forbids it

      Examples: other Targets and TargetReports
        | action                                          |
        | get the Target "cluster-2"                      |
        | get the TargetReport "cluster-2"                |
        | update the TargetReport "cluster-2"             |
        | get the Target "cluster-3" in namespace "other" |

      Examples: more than reading its Target and updating its TargetReport
        | action                                     |
        | update its own Target                      |
        | update the status of its own Target        |
        | delete its own TargetReport                |
        | create a TargetReport                      |
        | list Targets                               |
        | list TargetReports                         |

      Examples: anything else
        | action                                     |
        | get its own token Secret                   |
        | list Secrets                               |
        | list Releases                              |
        | create a Target                            |
        | list Targets in namespace "other"          |
