"""The harness itself as an image, `solar-conformance/harness:<version>`, built offline.

The repository's Dockerfile is built `FROM` a Debian root with Python 3.11 made here by
debootstrap (no image is pulled). Its context holds the checkout's wheel and every dependency's
wheel, downloaded beforehand by the harness's pip for that Python, so the build reaches no
registry. The dependency wheels are cached by the dependency list; the image is tagged with a
digest of everything it is made of and reused while that is unchanged.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import docker

from solar_conformance.provision.images.common import (
    ImageBuildError,
    Report,
    debian_rootfs,
    has_image,
    images_cache_dir,
    import_rootfs,
    pip_for_image,
    recipe_digest,
    remove_other_recipes,
)

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "Dockerfile"
PYPROJECT = ROOT / "pyproject.toml"
HARNESS_REPOSITORY = "solar-conformance/harness"
# python3-venv brings ensurepip, so the Dockerfile installs with pip inside the image.
HARNESS_BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
PYTHON_VERSION = "3.11"  # bookworm's python3
# Wheels that run on bookworm's glibc (2.36) for x86_64; pure-Python ones are `any`.
PLATFORMS = (
    "manylinux2014_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_34_x86_64",
    "any",
)
# What the wheel is built from: a change to any of them builds a new image.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "solar_conformance", "features")
BUILD_TIMEOUT_SECONDS = 900.0


def harness_version() -> str:
    version: str = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    return version


def harness_image_name() -> str:
    """The name users run: `solar-conformance/harness:<version of the package>`."""
    return f"{HARNESS_REPOSITORY}:{harness_version()}"


def dependencies() -> list[str]:
    listed: list[str] = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    return sorted(listed)


def build_harness_image(client: docker.DockerClient, report: Report) -> str:
    """`solar-conformance/harness:<version>`, built unless the engine has this recipe's image."""
    if not DOCKERFILE.exists():
        raise ImageBuildError(
            "the harness image is built from a checkout of the repository (its Dockerfile); "
            f"there is none at {ROOT}"
        )
    base = harness_base_image(client, report)
    wheels = dependency_wheels(report)
    digest = recipe_digest(base, wheels.name, DOCKERFILE, *(ROOT / s for s in SOURCES))
    built = f"{HARNESS_REPOSITORY}:{harness_version()}-{digest}"
    name = harness_image_name()
    if not has_image(client, built):
        started = time.monotonic()
        report(f"building {built} ...")
        with tempfile.TemporaryDirectory(prefix="solar-harness-image-") as scratch:
            context = Path(scratch)
            shutil.copy(DOCKERFILE, context / "Dockerfile")
            shutil.copytree(wheels, context / "wheels" / "dependencies")
            _build_wheel(context / "wheels" / "harness")
            _docker_build(context, base, built)
        remove_other_recipes(client, built)
        report(f"harness image built in {time.monotonic() - started:.0f} s")
    client.images.get(built).tag(name)
    return name


def harness_base_image(client: docker.DockerClient, report: Report) -> str:
    tarball = debian_rootfs("harness", HARNESS_BASE_PACKAGES, report)
    reference = f"solar-conformance/harness-base:bookworm-{recipe_digest(tarball.name)}"
    if not has_image(client, reference):
        report(f"importing {reference} ...")
        import_rootfs(client, tarball, reference, ["ENV PATH=/usr/local/bin:/usr/bin:/bin"])
        remove_other_recipes(client, reference)
    return reference


def dependency_wheels(report: Report) -> Path:
    """Every dependency's wheel for the image's Python, in a folder cached by the list."""
    wanted = dependencies()
    target = (
        images_cache_dir() / f"harness-wheels-{recipe_digest(wanted, PYTHON_VERSION, PLATFORMS)}"
    )
    return pip_for_image(
        target,
        "download",
        "--dest",
        PYTHON_VERSION,
        PLATFORMS,
        wanted,
        "download the harness's dependencies",
        report,
        f"downloading the wheels of {len(wanted)} dependencies for Python {PYTHON_VERSION} ...",
    )


def _build_wheel(output: Path) -> None:
    """The checkout's wheel, as `python -m build` makes it (in an isolated build environment)."""
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(output), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise ImageBuildError(f"building the harness's wheel failed: {last}")
    if len(list(output.glob("*.whl"))) != 1:
        raise ImageBuildError(f"building the harness's wheel left no single wheel in {output}")


def _docker_build(context: Path, base: str, reference: str) -> None:
    log = images_cache_dir() / "harness-image-build.log"
    with log.open("wb") as output:
        try:
            result = subprocess.run(
                [
                    "docker",
                    "build",
                    "--build-arg",
                    f"BASE={base}",
                    "--label",
                    f"org.opencontainers.image.version={harness_version()}",
                    "--tag",
                    reference,
                    str(context),
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=BUILD_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ImageBuildError(
                f"`docker build` of {reference} took longer than {BUILD_TIMEOUT_SECONDS:.0f} s; "
                f"see {log}"
            ) from None
    if result.returncode != 0:
        raise ImageBuildError(f"`docker build` of {reference} failed; see {log}")
