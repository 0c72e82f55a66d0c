"""The target cluster's workloads in the sim: Deployments become available, the agent runs.

Stands in for kube-controller-manager, the scheduler and a node (kwok on `local`, real nodes on
`kind`). A Deployment whose container runs the agent image starts the reference agent with the
kubeconfig from its mounted Secret; a changed pod template restarts it; deletion stops it. The
agent's output is kept per pod, where the page's troubleshooting step looks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from solar_conformance.core.api import ApiError, ClusterAPI, Obj
from solar_conformance.core.clock import Clock, LoopHandle, utc
from solar_conformance.core.conditions import secret_value, set_condition
from solar_conformance.core.contract import Contract
from solar_conformance.core.images import image_repository
from solar_conformance.simulators.reference.agent import Agent, Connect

RESYNC_SECONDS = 30.0


def container_args(deployment: Obj) -> dict[str, str]:
    """`--name=value` arguments of the first container."""
    containers = deployment["spec"]["template"]["spec"].get("containers") or [{}]
    args: dict[str, str] = {}
    for arg in containers[0].get("args") or []:
        name, _, value = str(arg).removeprefix("--").partition("=")
        args[name] = value
    return args


@dataclass
class _Running:
    template_hash: str
    handle: LoopHandle
    pod: str


@dataclass
class SimKubelet:
    target: ClusterAPI
    clock: Clock
    contract: Contract
    connect: Connect
    logs: dict[str, list[str]] = field(default_factory=dict)  # pod name -> lines
    pod_targets: dict[str, tuple[str, str]] = field(default_factory=dict)  # pod -> (ns, Target)
    _running: dict[tuple[str, str], _Running] = field(default_factory=dict)
    _restarts: int = 0

    def reconcile_all(self) -> float:
        seen: set[tuple[str, str]] = set()
        for deployment in self.target.list("Deployment"):
            key = (deployment["metadata"]["namespace"], deployment["metadata"]["name"])
            seen.add(key)
            template_hash = hashlib.sha256(
                json.dumps(deployment["spec"]["template"], sort_keys=True).encode()
            ).hexdigest()[:10]
            self._mark_available(deployment)
            if self._is_agent(deployment):
                self._ensure_agent(key, deployment, template_hash)
        for key in [k for k in self._running if k not in seen]:
            self._running.pop(key).handle.stop()
        return RESYNC_SECONDS  # Deployment events wake it sooner (the sim watches the cluster)

    def stop_all(self) -> None:
        for running in self._running.values():
            running.handle.stop()
        self._running.clear()

    def agent_logs(self, namespace: str, target: str) -> dict[str, list[str]]:
        """Every agent pod's log for this Target, the stopped ones too, oldest pod first."""
        return {
            pod: list(lines)
            for pod, lines in self.logs.items()
            if self.pod_targets.get(pod) == (namespace, target)
        }

    def _is_agent(self, deployment: Obj) -> bool:
        containers = deployment["spec"]["template"]["spec"].get("containers") or []
        return any(
            image_repository(str(c.get("image", ""))) == self.contract.agent_image
            for c in containers
        )

    def _mark_available(self, deployment: Obj) -> None:
        status = deployment.get("status", {})
        generation = deployment["metadata"].get("generation")
        if status.get("observedGeneration") == generation and status.get("availableReplicas"):
            return
        replicas = deployment["spec"].get("replicas", 1)
        deployment["status"] = {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }
        set_condition(
            deployment,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            self.clock.now(),
        )
        self.target.update_status(deployment)

    def _ensure_agent(self, key: tuple[str, str], deployment: Obj, template_hash: str) -> None:
        running = self._running.get(key)
        if running is not None and running.template_hash == template_hash:
            return
        if running is not None:
            running.handle.stop()
        self._restarts += 1
        pod = f"{key[0]}/{key[1]}-{template_hash}-{self._restarts:05d}"
        args = container_args(deployment)
        volumes = deployment["spec"]["template"]["spec"].get("volumes") or []
        secret_name = next((v["secret"]["secretName"] for v in volumes if "secret" in v), "")
        lines = self.logs.setdefault(pod, [])
        self.pod_targets[pod] = (args.get("namespace", ""), args.get("target", ""))

        def log(line: str) -> None:
            lines.append(f"{utc(self.clock.now())} {line}")

        def read_kubeconfig(namespace: str = key[0]) -> str:
            try:
                secret = self.target.get("Secret", secret_name, namespace)
            except ApiError as error:
                raise OSError(f"secret volume {secret_name}: {error.message}") from None
            value = secret_value(secret, self.contract.agent_kubeconfig_key)
            if value is None:
                raise OSError(
                    f"secret volume {secret_name} has no key {self.contract.agent_kubeconfig_key}"
                )
            return value

        agent = Agent(
            target=args.get("target", ""),
            namespace=args.get("namespace", ""),
            read_kubeconfig=read_kubeconfig,
            connect=self.connect,
            clock=self.clock,
            log=log,
            interval_seconds=float(args.get("interval", self.contract.report_interval_seconds)),
        )
        log(f"starting solar-agent for {agent.namespace}/{agent.target}")
        handle = self.clock.start_loop(f"agent {pod}", agent.tick)
        self._running[key] = _Running(template_hash, handle, pod)
