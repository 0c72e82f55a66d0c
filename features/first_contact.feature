Feature: First contact (manual)
  SolAr cannot reach into the target cluster. Flux on the target cluster must be
  pointed at the Target's render registry once. After that, Flux installs the
  agent and every other bound Release on its own.

  On the target cluster, create a pull Secret for the render registry, an
  OCIRepository and a HelmRelease, taken from the walk-through. Replace the
  registry host, the namespace and the Target name with your values. The URL
  has the form oci://<render-registry>/<namespace>/bootstrap-<target>.

  (Where the render registry is reached over plain HTTP, as in local runs on
  loopback, the OCIRepository also gets `insecure: true`; nothing else changes.)

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"
    And I have created the Target "cluster-1" in namespace "test"

  @spec
  Rule: SolAr cannot reach into the target cluster

    Scenario: Before first contact nothing reaches the target cluster
      Given solar-renderer has pushed the bootstrap chart of "cluster-1"
      Then the target cluster holds nothing of "cluster-1"

  @spec
  Rule: Flux on the target cluster must be pointed at the Target's render registry once

    Scenario: The Target's render registry is the Registry it references, whatever other Registries its namespace holds
      Given the operator has also created the Registries "archive" and "staging" in namespace "test", each with a pull Secret of its own
      And I have created the Target "cluster-2" in namespace "test"
      When I run the first-contact step for "cluster-2"
      Then the bootstrap chart of "cluster-2" points Flux at the render registry the Target references, with its pull Secret
      And Flux on the target installs the agent release of "cluster-2"

  @spec
  Rule: The page's objects, with only host, namespace and Target name replaced

    Scenario: The pull Secret is a dockerconfigjson for the render registry
      When I write the page's regcred for "cluster-1"
      Then it is a Secret "regcred" of type "kubernetes.io/dockerconfigjson"
      And its only entry is for the render registry host
      And its auth field is the base64 of its username and password

    Scenario: The OCIRepository points at the Target's bootstrap chart
      When I write the page's helmrelease.yaml for "cluster-1"
      Then the OCIRepository "solar-bootstrap" has the URL oci://<render-registry>/<namespace>/bootstrap-<target>
      And the OCIRepository selects the layer "application/vnd.cncf.helm.chart.content.v1.tar+gzip" with operation "copy"
      And the OCIRepository follows the semver range ">=0.0.0" with the pull Secret "regcred"
      And the HelmRelease "solar-bootstrap" installs the chart of the OCIRepository "solar-bootstrap"

    Scenario Outline: The URL has the form oci://<render-registry>/<namespace>/bootstrap-<target>
      Given the operator has set up the solar-agent in namespace "<namespace>"
      And I have created the Target "<target>" in namespace "<namespace>"
      When I write the page's helmrelease.yaml for "<target>"
      Then the OCIRepository "solar-bootstrap" has the URL oci://<render-registry>/<namespace>/bootstrap-<target>
      And solar-renderer has pushed the bootstrap chart of "<target>" to exactly that URL

      Examples:
        | namespace | target        |
        | test      | cluster-2     |
        | edge      | factory-07    |
        | prod-eu   | a             |

  @spec
  Rule: Replace the registry host, the namespace and the Target name with your values

    Scenario: The page's objects install the agent of any Target once host, namespace and Target name are replaced
      Given the operator has set up the solar-agent in namespace "edge"
      And I have created the Target "factory-07" in namespace "edge"
      When I run the first-contact step for "factory-07"
      Then the objects I applied differ from the page's only in the registry host, the namespace, the Target name and the pull credentials
      And Flux on the target installs the agent release of "factory-07"

  @spec
  Rule: After first contact, Flux installs the agent and every other bound Release on its own

    Scenario: First contact installs the agent
      When I run the first-contact step for "cluster-1"
      Then the OCIRepository "solar-bootstrap" on the target becomes Ready
      And the HelmRelease "solar-bootstrap" on the target becomes Ready
      And Flux on the target installs the agent release of "cluster-1"

    Scenario: A Release bound later arrives without touching the target cluster
      Given I have run the first-contact step for "cluster-1"
      And Flux on the target has installed the agent release of "cluster-1"
      When the operator binds the Release "podinfo" to "cluster-1"
      Then Flux on the target installs the release "podinfo" of "cluster-1"
      And I have written nothing to the target cluster since first contact

  @defined-here
  Rule: Bound Releases and the agent reach the target without waiting for an extra poll

    Scenario: A Release bound before the Target's token exists does not hold the agent back by a poll
      Given the operator has bound the Release "podinfo" to "cluster-2" in namespace "test"
      And I have created the Target "cluster-2" in namespace "test"
      When I run the first-contact step for "cluster-2"
      Then Flux on the target installs the agent release of "cluster-2" before the OCIRepository polls again
      And Flux on the target installs the release "podinfo" of "cluster-2"

    Scenario: Binding a Release that already existed re-renders the bootstrap chart
      Given the operator has created the Release "podinfo" in namespace "test"
      And I have run the first-contact step for "cluster-1"
      And Flux on the target has installed the agent release of "cluster-1"
      When the operator binds the existing Release "podinfo" to "cluster-1"
      Then solar-renderer pushes a bootstrap chart of "cluster-1" that carries the Release "podinfo"
      And Flux on the target installs the release "podinfo" of "cluster-1"
