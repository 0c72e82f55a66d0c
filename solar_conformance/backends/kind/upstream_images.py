"""Upstream SolAr's images in the local Docker engine (pulled, or there already, or built from
binaries), and everything upstream needs had before any cluster is made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound

from solar_conformance.backends.kind.upstream_source import (
    PROGRAMS,
    BadUpstream,
    HadChart,
    Report,
    UpstreamSolar,
    fetch_chart,
    split_reference,
)
from solar_conformance.core.landscape import MissingPrerequisite
from solar_conformance.provision.images.common import (
    SCRATCH_LAYOUT,
    ImageBuildError,
    ScratchImage,
    build_scratch_image,
    has_image,
    recipe_digest,
    remove_other_recipes,
)
from solar_conformance.provision.toolchain.toolchain import MissingTool, Toolchain

PROGRAM_UID = "65532"  # the user upstream's images run as


def engine_images(
    client: docker.DockerClient, references: dict[str, str], online: bool, report: Report
) -> dict[str, str]:
    """Each image in the local engine: pulled when online, otherwise it must be there already.
    Returns what each is by content (its registry digest when it has one, else its image ID)."""
    found = {}
    for program, reference in references.items():
        if online:
            report(f"pulling {reference} ...")
            repository, tag = split_reference(reference)
            try:
                client.images.pull(repository, tag=tag)
            except (APIError, ImageNotFound) as error:
                explanation = getattr(error, "explanation", None) or str(error)
                raise BadUpstream(
                    f"the image {reference} cannot be pulled: {explanation}".splitlines()[0]
                ) from None
        elif split_reference(reference)[1] == "latest" and program == "solar-renderer":
            raise BadUpstream(
                f"the image {reference} is tagged latest, which the renderer's Job always pulls "
                "(no registry offline): tag it otherwise or use --solar-kind-images=online"
            )
        try:
            image = client.images.get(reference)
        except ImageNotFound:
            raise BadUpstream(
                f"the image {reference} is not in the local Docker engine: pull or build it "
                "first, or use --solar-kind-images=online"
            ) from None
        digests = [d for d in image.attrs.get("RepoDigests") or [] if "@" in d]
        found[program] = digests[0].split("@", 1)[1] if digests else str(image.id)
    return found


def binary_images(
    client: docker.DockerClient, binaries: dict[str, Path], report: Report
) -> dict[str, str]:
    """One `FROM scratch` image per program, cached by the binary's digest."""
    images: dict[str, str] = {}
    for program, binary in binaries.items():
        path = f"/{program}"  # where upstream's chart runs it from
        reference = (
            f"solar-conformance/{program}:{recipe_digest(binary, PROGRAM_UID, SCRATCH_LAYOUT)}"
        )
        if not has_image(client, reference):
            report(f"building {reference} ...")
            build_scratch_image(
                client, ScratchImage(reference, {path: binary}, (path,), user=PROGRAM_UID)
            )
            remove_other_recipes(client, reference)
        images[program] = reference
    return images


# --- both --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HadUpstream:
    """The chart and the images to install, and what they are (the report's SolAr version)."""

    chart: HadChart
    images: dict[str, str]  # program -> reference in the local engine
    description: str


def have_upstream(
    upstream: UpstreamSolar,
    client: docker.DockerClient,
    helm: Path,
    online: bool,
    scratch: Path,
    report: Report,
) -> HadUpstream:
    """Everything upstream needs, here, or BadUpstream saying what cannot be had."""
    chart = fetch_chart(helm, upstream.chart, scratch, report)
    said = f"upstream chart {upstream.chart.given} version {chart.version or '?'}"
    if upstream.binaries:
        images = binary_images(client, upstream.binaries, report)
        commit = upstream.source_commit()
        described = f"programs built from source commit {commit or 'unknown'}"
        return HadUpstream(chart, images, f"{said}; {described}")
    images = upstream.images or chart.default_images()
    digests = engine_images(client, images, online, report)
    described = ", ".join(f"{images[p]} ({digests[p]})" for p in PROGRAMS)
    return HadUpstream(chart, images, f"{said}; images {described}")


def had_before_the_clusters(
    upstream: UpstreamSolar | None,
    client: docker.DockerClient,
    toolchain: Toolchain,
    online: bool,
    scratch: Path,
    report: Report,
) -> HadUpstream:
    """Upstream's chart and images in this machine, or MissingPrerequisite with the one line
    why they cannot be."""
    if upstream is None:
        raise MissingPrerequisite("--solar-impl=upstream needs --solar-upstream-chart")
    try:
        helm = toolchain.path("helm")
    except MissingTool as problem:
        raise MissingPrerequisite(
            f"--solar-impl=upstream renders SolAr's chart: {problem}"
        ) from None
    try:
        return have_upstream(upstream, client, helm, online, scratch, report)
    except (BadUpstream, ImageBuildError) as problem:
        raise MissingPrerequisite(str(problem)) from None
