"""A chart as Flux's helm-controller renders it for the HelmRelease that installs it.

Three kinds of chart, told apart by their templates:

- plain manifests (no template action): read as they are, no helm needed;
- manifests whose only actions are `{{ .Release.Name }}` and `{{ .Release.Namespace }}` (the
  reference SolAr's charts): those are replaced by the HelmRelease's values, exactly as Helm
  would, still without helm;
- any other template (upstream SolAr's: `range` over `.Values`, `sha256sum`, `toYaml`, `fail`):
  `helm template` with the HelmRelease's release name, namespace and values, with the helm of
  the harness's toolchain.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solar_conformance.core import yamlio
from solar_conformance.core.api import Obj
from solar_conformance.core.helm_records import MAX_RELEASE_NAME, configured_release
from solar_conformance.core.oci import Chart

# The command that builds the toolchain's helm (docs/toolchain.md).
HELM_BUILD_COMMAND = "solar-conformance provision tools build --only helm"
HELM_TIMEOUT_SECONDS = 60.0
_RELEASE_VALUE = re.compile(r"\{\{ \.Release\.(Name|Namespace) \}\}")
_SOURCE_COMMENT = re.compile(r"^# Source: [^/\n]+/templates/(?P<path>.+)$", re.MULTILINE)
_DOCUMENT_START = re.compile(r"(?m)^---[ \t]*$")


class RenderError(ValueError):
    """Helm refused the chart (a `fail`, a template error, a release name too long) or rendered
    something that is not YAML: what Flux's install of it would report."""


class HelmMissing(Exception):
    """A chart holds Helm templates and the harness has no helm: one line naming the command
    that builds it."""


# Where the helm binary is: a path, or HelmMissing with the one line that says how to build it.
HelmLocator = Callable[[], Path]


@dataclass(frozen=True)
class Installation:
    """What a HelmRelease hands Helm: the release name, its namespace and the values."""

    release_name: str
    namespace: str
    values: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, helmrelease: Obj, values_from: Mapping[str, Any] | None = None) -> Installation:
        """As helm-controller takes them: the release its spec asks for (`configured_release`:
        `spec.releaseName`, else `<targetNamespace>-<name>` or the HelmRelease's name, cut past
        53 characters; `spec.targetNamespace`, else the HelmRelease's namespace) and
        `spec.values` merged over what `spec.valuesFrom` gave (`values_from`)."""
        release = configured_release(helmrelease)
        return cls(
            release.name,
            release.namespace,
            merged_values(values_from or {}, (helmrelease.get("spec") or {}).get("values") or {}),
        )


def merged_values(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of values: maps merge key by key, anything else in `over` replaces."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(below, Mapping) and isinstance(value, Mapping):
            merged[key] = merged_values(below, value)
        else:
            merged[key] = value
    return merged


def needs_helm(chart: Chart) -> bool:
    """Some template has an action other than `{{ .Release.Name }}`/`{{ .Release.Namespace }}`."""
    return any("{{" in _RELEASE_VALUE.sub("", text) for text in chart.templates.values())


def with_release_values(chart: Chart, installation: Installation) -> Chart:
    """The chart with `{{ .Release.Name }}` and `{{ .Release.Namespace }}` replaced as Helm
    replaces them; ValueError for any other template action or a release name Helm refuses."""
    values = {"Name": installation.release_name, "Namespace": installation.namespace}
    templates: dict[str, str] = {}
    for path, text in chart.templates.items():
        if "{{" not in text:
            templates[path] = text
            continue
        if ".Release.Name" in text and len(installation.release_name) > MAX_RELEASE_NAME:
            raise RenderError(
                f"release name {installation.release_name!r} is longer than "
                f"{MAX_RELEASE_NAME} characters"
            )
        rendered = _RELEASE_VALUE.sub(lambda m: values[m.group(1)], text)
        if "{{" in rendered:
            raise RenderError(
                f"{path}: no template action but .Release.Name/Namespace renders without helm"
            )
        templates[path] = rendered
    return dataclasses.replace(chart, templates=templates)


class ChartRenderer:
    """Renders charts as Flux's Helm does; helm is looked for only when a chart needs it."""

    CACHE_LIMIT = 256

    def __init__(self, helm: HelmLocator | None = None) -> None:
        self._helm = helm
        self._rendered: dict[str, Chart] = {}
        self._lock = threading.Lock()

    def render(self, chart: Chart, installation: Installation | None) -> Chart:
        """The chart with each template as Helm renders it (a template that renders to nothing
        is left out); a chart of plain manifests as it is. Without an installation (no
        HelmRelease installs the chart) only a chart of plain manifests or release values can
        be read, the latter as it is written."""
        if not needs_helm(chart):
            if installation is None or not any("{{" in t for t in chart.templates.values()):
                return chart
            return with_release_values(chart, installation)
        if installation is None:
            raise RenderError("it holds Helm templates and no HelmRelease installs it")
        key = _cache_key(chart, installation)
        with self._lock:
            known = self._rendered.get(key)
        if known is not None:
            return known
        rendered = self._helm_template(chart, installation)
        with self._lock:
            if len(self._rendered) >= self.CACHE_LIMIT:
                del self._rendered[next(iter(self._rendered))]
            self._rendered[key] = rendered
        return rendered

    def _helm_template(self, chart: Chart, installation: Installation) -> Chart:
        # Repacked from what Chart keeps (Chart.yaml's name, version and annotations, values.yaml,
        # templates/): SolAr's charts hold nothing else, no subcharts and no other files.
        helm = self._locate(chart)
        with tempfile.TemporaryDirectory(prefix="chart-render-") as scratch:
            folder = Path(scratch)
            archive = folder / f"{chart.name}-{chart.version}.tgz"
            archive.write_bytes(chart.package())
            values = folder / "release-values.yaml"
            values.write_text(yamlio.dump(dict(installation.values)))
            command = [
                str(helm),
                "template",
                installation.release_name,
                str(archive),
                "--namespace",
                installation.namespace,
                "--values",
                str(values),
            ]
            try:
                finished = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    env={"HOME": scratch, "PATH": ""},
                    timeout=HELM_TIMEOUT_SECONDS,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise RenderError(
                    f"helm template did not finish within {HELM_TIMEOUT_SECONDS:.0f} s"
                ) from None
        if finished.returncode != 0:
            raise RenderError(f"helm template: {_helm_error(finished.stderr)}")
        rendered = dataclasses.replace(chart, templates=rendered_templates(finished.stdout))
        try:
            rendered.manifests()
        except yamlio.YAMLError as error:
            raise RenderError(f"helm rendered what is not YAML: {error}") from None
        return rendered

    def _locate(self, chart: Chart) -> Path:
        what = f"{chart.name}:{chart.version} holds Helm templates, which need helm to render"
        if self._helm is None:
            raise HelmMissing(f"{what}; build it with: {HELM_BUILD_COMMAND}")
        try:
            return self._helm()
        except HelmMissing as missing:
            raise HelmMissing(f"{what}: {missing}") from None


def _helm_error(stderr: str) -> str:
    """Helm's own error line (`Error: ...`; after it helm may add a hint), else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    return (errors or lines or ["failed without a word"])[-1]


def rendered_templates(output: str) -> dict[str, str]:
    """`helm template`'s output as templates again: each document under the template it came
    from (its `# Source:` comment), documents of one template joined."""
    templates: dict[str, list[str]] = {}
    for document in _DOCUMENT_START.split(output):
        source = _SOURCE_COMMENT.search(document)
        if not document.strip() or source is None:
            continue
        templates.setdefault(source["path"], []).append(document.strip("\n") + "\n")
    return {path: "---\n".join(documents) for path, documents in sorted(templates.items())}


def _cache_key(chart: Chart, installation: Installation) -> str:
    content = json.dumps(
        [
            chart.name,
            chart.version,
            chart.templates,
            chart.values,
            chart.annotations,
            dataclasses.asdict(installation),
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(content.encode()).hexdigest()
