"""What `python -m fixtures.local up` leaves for walking the page by hand: env.sh and `logs`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fixtures.local.__main__ import agent_logs, environment_script

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6dGVzdDphZ2VudCJ9.c2lnbmF0dXJl"


def _sourced(script: Path, expression: str) -> str:
    result = subprocess.run(
        ["bash", "-c", f'. "$1" && printf %s "{expression}"', "bash", str(script)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    )
    return result.stdout


def test_env_script_names_both_kubeconfigs_and_puts_kubectl_first(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    solar, target = tmp_path / "a dir" / "solar.kubeconfig", tmp_path / "target's.kubeconfig"
    script.write_text(environment_script(solar, target, str(tmp_path / "kube bin")))
    assert _sourced(script, "$SOLAR_KUBECONFIG") == str(solar)
    assert _sourced(script, "$TARGET_KUBECONFIG") == str(target)
    assert _sourced(script, "$PATH").split(":")[0] == str(tmp_path / "kube bin")


def test_env_script_without_a_built_kubectl_leaves_path_alone(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    script.write_text(environment_script(tmp_path / "s", tmp_path / "t", None))
    assert _sourced(script, "$PATH") == os.environ["PATH"]


def test_logs_print_every_agent_of_the_namespace_oldest_first_redacted(tmp_path: Path) -> None:
    for number, text in ((1, "first pod\n"), (2, f"reported with {JWT}\n")):
        pod = tmp_path / "test" / f"solar-agent-abc-{number:05d}"
        pod.mkdir(parents=True)
        (pod / "agent.log").write_text(text)
        os.utime(pod / "agent.log", (number, number))
    (tmp_path / "other" / "solar-agent-def-00003").mkdir(parents=True)
    (tmp_path / "other" / "solar-agent-def-00003" / "agent.log").write_text("other namespace\n")

    output = agent_logs(tmp_path, "test")

    assert output.index("solar-agent-abc-00001") < output.index("solar-agent-abc-00002")
    assert "first pod" in output and "reported with" in output
    assert "other namespace" not in output
    assert JWT not in output and "eyJ" not in output


def test_logs_of_a_namespace_without_agents_say_so(tmp_path: Path) -> None:
    assert agent_logs(tmp_path, "test") == "no agent has run in namespace test yet\n"
