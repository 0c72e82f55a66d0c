Feature: Check that it worked
  On the SolAr cluster, check the credential condition on the Target:

      kubectl get target cluster-1 -n test -o jsonpath='{.status.conditions}'

  Look for AgentCredentialReady. Once Flux has installed the agent, the report
  updates:

      kubectl get targetreport cluster-1 -n test -o jsonpath='{.spec.lastReportTime}'

  lastReportTime is empty until the first report and then advances with every
  report. If it stays empty, check the agent pod logs on the target cluster.

  Background:
    Given a SolAr cluster, a render registry and a target cluster
    And the operator has set up the solar-agent in namespace "test"

  @spec
  Rule: AgentCredentialReady says whether the agent has a credential

    @needs-deny-token-requests @needs-configure-apiserver-url
    Scenario Outline: AgentCredentialReady is <Status> with reason <Reason>
      Given <situation>
      When I create the Target "cluster-1" in namespace "test"
      Then AgentCredentialReady of "cluster-1" is "<Status>" with reason "<Reason>"
      And <evidence>

      Examples: the page's table
        | Status | Reason     | Meaning                                                                              | situation                                                                            | evidence                                                        |
        | True   | Issued     | A token exists. The message names the Secret and its expiry.                         | the operator has set controller.agent.apiserverURL                                   | the condition message names the token's Secret and its expiry   |
        | False  | Disabled   | The operator has not set `controller.agent.apiserverURL`.                            | the operator has not set controller.agent.apiserverURL                               | no token is minted for "cluster-1"                              |
        | False  | Revoked    | The Target carries `solar.opendefense.cloud/agent-credential: revoked`.              | the Target I create carries "solar.opendefense.cloud/agent-credential: revoked"      | no token is minted for "cluster-1"                              |
        | False  | MintFailed | The token could not be created. The message has the error. The controller retries.   | the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy" | the condition message has the error "tokens are paused by policy" |

  @spec
  Rule: Issued: a token exists; the message names the Secret and its expiry

    Scenario: The Secret named in the message holds a token that expires when the message says
      When I create the Target "cluster-1" in namespace "test"
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the Secret named in the condition message holds a token for the agent of "cluster-1"
      And that token expires at the time the condition message names

  @defined-here
  Rule: Disabled: without controller.agent.apiserverURL no token is minted, and none is kept

    @needs-configure-apiserver-url
    Scenario: Setting controller.agent.apiserverURL later issues the token
      Given the operator has not set controller.agent.apiserverURL
      And I have created the Target "cluster-1" in namespace "test"
      And AgentCredentialReady of "cluster-1" is "False" with reason "Disabled"
      When the operator sets controller.agent.apiserverURL
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"

    @fault @needs-configure-apiserver-url
    Scenario: Unsetting controller.agent.apiserverURL withdraws the token
      Given I have created the Target "cluster-1" in namespace "test"
      And the agent of "cluster-1" holds its token
      When the operator unsets controller.agent.apiserverURL
      Then the old token of "cluster-1" is rejected within the authentication cache window
      And AgentCredentialReady of "cluster-1" is "False" with reason "Disabled"
      And no token Secret of "cluster-1" exists

  @spec @fault
  Rule: MintFailed: the token could not be created, the message has the error, the controller retries

    @needs-deny-token-requests @needs-audit-log
    Scenario: The controller retries a failed mint and issues the token once the cause is gone
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And I have created the Target "cluster-1" in namespace "test"
      When the SolAr API server has refused 3 token requests for the agent of "cluster-1"
      Then AgentCredentialReady of "cluster-1" is "False" with reason "MintFailed"
      And the condition message has the error "tokens are paused by policy"
      And no token is minted for "cluster-1"
      When the SolAr API server accepts token requests again
      Then AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the Secret named in the condition message holds a token for the agent of "cluster-1"

    @needs-deny-token-requests @needs-change-denial
    Scenario: The MintFailed message has the error of the latest attempt
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And I have created the Target "cluster-1" in namespace "test"
      And AgentCredentialReady of "cluster-1" is "False" with reason "MintFailed"
      When the SolAr API server's denial of token requests in namespace "test" changes to "token quota exceeded"
      Then the condition message of "cluster-1" comes to have the error "token quota exceeded"
      And AgentCredentialReady of "cluster-1" is "False" with reason "MintFailed"

  @defined-here @fault
  Rule: MintFailed: every failure is a Warning event, and the retries back off up to a cap for as long as the cause lasts

    @needs-deny-token-requests @needs-audit-log
    Scenario: The waits between attempts grow up to the cap and the retries go on at the cap
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And I have created the Target "cluster-1" in namespace "test"
      When the SolAr API server has refused 8 token requests for the agent of "cluster-1"
      Then the waits between those requests grow up to the profile's cap and stay there
      And every refused token request is a Warning event on the Target "cluster-1"
      And AgentCredentialReady of "cluster-1" is "False" with reason "MintFailed"
      And no Secret made for "cluster-1" is left without a token the SolAr API server accepts

    @needs-deny-token-requests @needs-audit-log
    Scenario: After a successful mint, the next failures back off from the initial wait again
      Given the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And I have created the Target "cluster-1" in namespace "test"
      And the SolAr API server has refused 4 token requests for the agent of "cluster-1"
      And the SolAr API server accepts token requests again
      And AgentCredentialReady of "cluster-1" is "True" with reason "Issued"
      And the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      When I request a new credential for "cluster-1"
      Then after the success, the first wait between refused token requests for the agent of "cluster-1" is the profile's initial wait

    @needs-deny-token-requests @needs-audit-log
    Scenario: A mint failing for one Target does not hold back the Targets of another namespace
      Given the operator has set up the solar-agent in namespace "other"
      And the SolAr API server denies token requests in namespace "test" with "tokens are paused by policy"
      And I have created the Target "cluster-1" in namespace "test"
      And the SolAr API server has refused 6 token requests for the agent of "cluster-1"
      When I create the Target "cluster-3" in namespace "other"
      And I create a Target of the same name, "cluster-1", in namespace "other"
      Then AgentCredentialReady of "cluster-3" is "True" with reason "Issued" within 10 seconds
      And AgentCredentialReady of the Target "cluster-1" in namespace "other" is "True" with reason "Issued" within 10 seconds

  @spec
  Rule: lastReportTime is empty until the first report and then advances with every report

    Scenario: lastReportTime is empty until the first report
      Given I have created the Target "cluster-1" in namespace "test"
      When solar-renderer has pushed the bootstrap chart of "cluster-1"
      Then the TargetReport "cluster-1" exists and its lastReportTime is empty

    Scenario: lastReportTime advances with every report
      Given I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then the TargetReport "cluster-1" gets a lastReportTime
      And the lastReportTime of "cluster-1" advances with each of the next 24 reports

  @spec @fault
  Rule: If it stays empty, check the agent pod logs on the target cluster

    @needs-cut-agent-link @needs-agent-logs
    Scenario: While lastReportTime stays empty, the agent pod's log on the target cluster says why
      Given the agent pods of the target cluster cannot reach the SolAr API server
      And I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then the agent pod of "cluster-1" on the target cluster logs 2 failed reports that say it cannot reach the SolAr API server
      And the lastReportTime of "cluster-1" is still empty

  @defined-here @fault
  Rule: The harness's own wait for a report points at the agent pod logs

    @needs-cut-agent-link @needs-agent-logs
    Scenario: A wait for the first report that runs out says to check the agent pod logs and shows them
      Given the agent pods of the target cluster cannot reach the SolAr API server
      And I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      And I wait for the first lastReportTime of "cluster-1"
      Then the wait fails and says to check the agent pod logs on the target cluster
      And the failure shows the agent's log lines, which say why it could not report
      And the failure shows no token
      And the agent pod logs of "cluster-1" on the target cluster show no token

    @needs-agent-logs
    Scenario: The agent pod logs that people are sent to never show the agent's token
      Given I have created the Target "cluster-1" in namespace "test"
      When I run the first-contact step for "cluster-1"
      Then the TargetReport "cluster-1" gets a lastReportTime
      And the agent pod logs of "cluster-1" on the target cluster show no token
