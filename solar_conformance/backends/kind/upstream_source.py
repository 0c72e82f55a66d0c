"""How upstream SolAr is given, in the ways its users have it, and what was had of it.

The chart: an OCI reference (`oci://host/path/solar`, as upstream publishes it), a chart folder
(`charts/solar` of a checkout) or a packaged chart (`.tgz`, as `helm package` writes it), with an
optional version. The programs: images by reference (`ghcr.io/opendefensecloud/solar-apiserver:
0.3.0`, ...), the chart's own images when none are named, or a folder of static binaries, which
the harness wraps into images. `UpstreamSolar.from_options` checks what can be checked without
the network or the Docker engine; `fetch_chart` and upstream_images.py get the rest at the start of
the landscape, before any cluster is made, and raise BadUpstream (one line) when they cannot.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from typing import Any

from solar_conformance.core import yamlio

PROGRAMS = ("solar-apiserver", "solar-controller-manager", "solar-renderer")
# The chart's values key of each program's image.
VALUES_KEYS = {
    "solar-apiserver": "apiserver",
    "solar-controller-manager": "controller",
    "solar-renderer": "renderer",
}
OCI = "oci://"
PACKAGE_SUFFIXES = (".tgz", ".tar.gz")
HELM_TIMEOUT_SECONDS = 300.0
LOOPBACK_NAMES = ("localhost",)

Report = Callable[[str], None]


class BadUpstream(Exception):
    """What was given for --solar-impl=upstream cannot be used or had: one line."""


@dataclass(frozen=True)
class ChartSource:
    """The chart as given: an `oci://` reference, a folder or a packaged chart."""

    given: str
    version: str | None = None

    @property
    def is_reference(self) -> bool:
        return self.given.startswith(OCI)

    def describe(self) -> str:
        return f"{self.given}:{self.version}" if self.is_reference and self.version else self.given


@dataclass(frozen=True)
class UpstreamSolar:
    chart: ChartSource
    binaries: dict[str, Path] = field(default_factory=dict)  # program -> static binary
    images: dict[str, str] = field(default_factory=dict)  # program -> image reference

    @classmethod
    def from_options(
        cls,
        bin_dir: Path | None,
        chart: Path | str | None,
        version: str | None = None,
        images: Sequence[str] = (),
    ) -> UpstreamSolar:
        if chart is None:
            raise BadUpstream(
                "--solar-impl=upstream needs --solar-upstream-chart: SolAr's chart as "
                "oci://ghcr.io/opendefensecloud/charts/solar, a chart folder or a packaged .tgz"
            )
        source = _chart_source(str(chart), version)
        if bin_dir is not None and images:
            raise BadUpstream(
                "--solar-upstream-bin and --solar-upstream-images both name SolAr's programs: "
                "give one of them"
            )
        if bin_dir is not None:
            return cls(source, binaries=_binaries(bin_dir))
        return cls(source, images=_image_references(images))

    def source_commit(self) -> str | None:
        """The commit of the chart folder's checkout, when it is one."""
        if self.chart.is_reference:
            return None
        folder = Path(self.chart.given)
        try:
            found = subprocess.run(
                [
                    "git",
                    "-C",
                    str(folder if folder.is_dir() else folder.parent),
                    "rev-parse",
                    "HEAD",
                ],
                check=True,
                capture_output=True,
                text=True,
            )
        except (OSError, subprocess.CalledProcessError):
            return None
        return found.stdout.strip()


def _chart_source(given: str, version: str | None) -> ChartSource:
    if version is not None and not version.strip():
        raise BadUpstream("--solar-upstream-version is empty: give a chart version or leave it out")
    if given.startswith(OCI):
        host, _, repository = given.removeprefix(OCI).partition("/")
        if (
            not host
            or not repository
            or repository.endswith("/")
            or ":" in repository
            or "@" in repository
        ):
            raise BadUpstream(
                f"--solar-upstream-chart {given}: not a chart reference; write it as "
                "oci://HOST/PATH/solar and the version as --solar-upstream-version"
            )
        return ChartSource(given, version)
    if not given.strip() or not Path(given).exists():
        said = "no such file or folder"
        if not given.strip():
            said = "names no chart"
        elif "://" in given:
            said = "only oci:// references are pulled"
        raise BadUpstream(
            f"--solar-upstream-chart {given!r}: {said}; give charts/solar of SolAr's checkout, "
            "a packaged .tgz or an oci:// reference"
        )
    path = Path(given)
    if path.name.endswith(PACKAGE_SUFFIXES):
        if not path.is_file() or not _package_has_chart(path):
            raise BadUpstream(
                f"--solar-upstream-chart {given}: not a packaged Helm chart (no Chart.yaml in "
                "it); give the .tgz that `helm package` wrote"
            )
        metadata = yamlio.load(_package_member(path, "Chart.yaml") or "")
    else:
        if not (path / "Chart.yaml").is_file() or not (path / "templates").is_dir():
            raise BadUpstream(
                f"--solar-upstream-chart {given}: not a Helm chart (no Chart.yaml and "
                "templates/); give charts/solar of SolAr's checkout, a packaged .tgz or an "
                "oci:// reference"
            )
        metadata = yamlio.load((path / "Chart.yaml").read_text())
    found = str((metadata or {}).get("version", "")) if isinstance(metadata, dict) else ""
    if version is not None and version != found:
        raise BadUpstream(
            f"--solar-upstream-version {version}: the chart at {given} is version {found or '?'}; "
            "drop the option or give the chart of that version"
        )
    return ChartSource(given, found or None)


def _binaries(bin_dir: Path) -> dict[str, Path]:
    if not bin_dir.is_dir():
        raise BadUpstream(
            f"--solar-upstream-bin {bin_dir}: no such folder; give the folder that holds "
            f"{', '.join(PROGRAMS)}"
        )
    binaries = {program: bin_dir / program for program in PROGRAMS}
    absent = [name for name, path in binaries.items() if not _is_executable(path)]
    if absent:
        raise BadUpstream(
            f"--solar-upstream-bin {bin_dir}: no executable {', '.join(absent)}; build "
            "SolAr's commands into that folder"
        )
    return binaries


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _image_references(given: Sequence[str]) -> dict[str, str]:
    """Each reference names its program by its repository's last segment."""
    references = [part.strip() for text in given for part in text.split(",") if part.strip()]
    if not references:
        return {}
    images: dict[str, str] = {}
    for reference in references:
        if "@" in reference:
            raise BadUpstream(
                f"--solar-upstream-images {reference}: the chart takes a repository and a tag, "
                "not a digest; give the tag"
            )
        repository = split_reference(reference)[0]
        program = repository.rsplit("/", 1)[-1]
        if program not in PROGRAMS:
            raise BadUpstream(
                f"--solar-upstream-images {reference}: names none of {', '.join(PROGRAMS)} "
                "(the repository's last segment says which program an image runs)"
            )
        if program in images:
            raise BadUpstream(f"--solar-upstream-images names {program} twice")
        images[program] = reference
    missing = [program for program in PROGRAMS if program not in images]
    if missing:
        raise BadUpstream(
            f"--solar-upstream-images names no image of {', '.join(missing)}; give one "
            "reference for each of the three programs"
        )
    return images


def split_reference(reference: str) -> tuple[str, str]:
    """Repository and tag; a reference without a tag has the tag `latest`."""
    head, _, last = reference.rpartition("/")
    if ":" in last:
        name, _, tag = last.partition(":")
        return f"{head}/{name}" if head else name, tag
    return reference, "latest"


def chart_image_values(reference: str) -> tuple[str, str]:
    """The chart's `image.repository` and `image.tag` for a reference."""
    return split_reference(reference)


# --- the chart, had ----------------------------------------------------------------------------
@dataclass(frozen=True)
class HadChart:
    """A chart helm can render: its path here, and what its Chart.yaml and values.yaml say."""

    path: Path
    version: str
    app_version: str
    values: dict[str, Any]

    def default_images(self) -> dict[str, str]:
        """The images the chart names when it is given none (tag "" is its appVersion)."""
        images = {}
        for program, key in VALUES_KEYS.items():
            image = ((self.values.get(key) or {}).get("image")) or {}
            repository = str(image.get("repository") or "")
            if not repository:
                raise BadUpstream(f"the chart names no image for {program} ({key}.image)")
            images[program] = f"{repository}:{image.get('tag') or self.app_version}"
        return images


def fetch_chart(helm: Path, source: ChartSource, scratch: Path, report: Report) -> HadChart:
    """The chart here: a folder or package as it is, a reference pulled with helm into scratch."""
    path = Path(source.given)
    if source.is_reference:
        path = _pull(helm, source, scratch, report)
    if path.is_dir():
        chart = yamlio.load((path / "Chart.yaml").read_text())
        values_file = path / "values.yaml"
        values = yamlio.load(values_file.read_text()) if values_file.is_file() else {}
    else:
        chart = yamlio.load(_package_member(path, "Chart.yaml") or "")
        values = yamlio.load(_package_member(path, "values.yaml") or "{}")
    chart = chart if isinstance(chart, dict) else {}
    return HadChart(
        path,
        str(chart.get("version", "")),
        str(chart.get("appVersion", "") or chart.get("version", "")),
        values if isinstance(values, dict) else {},
    )


def helm_env(scratch: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HELM_CONFIG_HOME": str(scratch / "helm-config"),
        "HELM_CACHE_HOME": str(scratch / "helm-cache"),
        "HELM_DATA_HOME": str(scratch / "helm-data"),
    }


def _pull(helm: Path, source: ChartSource, scratch: Path, report: Report) -> Path:
    destination = scratch / "chart"
    destination.mkdir(parents=True, exist_ok=True)
    command = [str(helm), "pull", source.given, "--destination", str(destination)]
    if source.version:
        command += ["--version", source.version]
    if _is_loopback(source.given.removeprefix(OCI).split("/", 1)[0]):
        command.append("--plain-http")  # a registry on this machine, as a test serves one
    report(f"pulling the chart {source.describe()} ...")
    try:
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            text=True,
            env=helm_env(scratch),
            timeout=HELM_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise BadUpstream(
            f"--solar-upstream-chart {source.describe()}: no answer within "
            f"{HELM_TIMEOUT_SECONDS:.0f} s; check the network and the reference"
        ) from None
    except subprocess.CalledProcessError as error:
        last = (error.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise BadUpstream(
            f"--solar-upstream-chart {source.describe()} cannot be pulled: {last[0]}"
        ) from None
    packages = sorted(destination.glob("*.tgz"))
    if len(packages) != 1:
        raise BadUpstream(f"helm pull of {source.describe()} wrote {len(packages)} packages")
    return packages[0]


def _is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.strip("[]")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False


def _package_member(package: Path, name: str) -> str | None:
    """A file at the top of the chart in a packaged chart (`<chart>/<name>`)."""
    try:
        with tarfile.open(package, "r:gz") as archive:
            for member in archive.getmembers():
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == name and member.isfile():
                    extracted = archive.extractfile(member)
                    return extracted.read().decode() if extracted else None
    except (OSError, tarfile.TarError, UnicodeDecodeError):
        return None
    return None


def _package_has_chart(package: Path) -> bool:
    return _package_member(package, "Chart.yaml") is not None
