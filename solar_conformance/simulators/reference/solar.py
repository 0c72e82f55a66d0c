"""The reference SolAr components together, as a backend runs them on its clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from solar_conformance.core.api import ClusterAPI
from solar_conformance.core.clock import Clock, LoopHandle
from solar_conformance.core.contract import Contract
from solar_conformance.simulators.reference.bindings import ProfileController
from solar_conformance.simulators.reference.controller import ControllerConfig, CredentialController
from solar_conformance.simulators.reference.render_config import ConnectRegistry, RendererConfig
from solar_conformance.simulators.reference.renderer import Renderer

Log = Callable[[str], None]


@dataclass
class ReferenceSolar:
    """solar-controller-manager (credentials and Profiles) and solar-renderer, as loops."""

    controller: CredentialController
    renderer: Renderer
    profiles: ProfileController | None
    loops: list[LoopHandle] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        client_for: Callable[[str], ClusterAPI],
        clock: Clock,
        controller_clock: Clock,
        contract: Contract,
        connect_registry: ConnectRegistry,
        renderer_config: RendererConfig,
        log_for: Callable[[str], Log],
        bind_profiles: bool = True,
    ) -> ReferenceSolar:
        """`bind_profiles=False` leaves Profiles to another SolAr (upstream's)."""
        manager_log = log_for("solar-controller-manager")
        controller = CredentialController(
            client_for("solar-controller-manager"),
            controller_clock,
            contract,
            ControllerConfig(apiserver_url=renderer_config.apiserver_url),
            log=manager_log,
        )
        profiles = (
            ProfileController(client_for("solar-controller-manager"), log=manager_log)
            if bind_profiles
            else None
        )
        renderer = Renderer(
            client_for("solar-renderer"),
            connect_registry,
            clock,
            contract,
            renderer_config,
            log=log_for("solar-renderer"),
        )
        # The renderer goes first: on the virtual clock loops due at one instant run in start
        # order, and this order shows the renderer states that real concurrency can show it
        # (a Target without its binding, a binding without its token).
        loops = [clock.start_loop("solar-renderer", renderer.reconcile_all)]
        if profiles is not None:
            loops.append(clock.start_loop("profile-controller", profiles.reconcile_all))
        loops.append(clock.start_loop("solar-controller-manager", controller.reconcile_all))
        return cls(controller, renderer, profiles, loops)

    def configure_apiserver_url(self, url: str | None) -> None:
        """`controller.agent.apiserverURL`, which both components read."""
        self.controller.config.apiserver_url = url
        self.renderer.config.apiserver_url = url
        self.wake()

    def wake(self) -> None:
        for loop in self.loops:
            loop.wake()
