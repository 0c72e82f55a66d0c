"""How upstream SolAr is given, checked without the network or a Docker engine: the chart as an
OCI reference, a folder or a packaged .tgz (with its version), the programs as images by
reference, the chart's own images or binaries; and what a run with each refuses in one line."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError, ImageNotFound

from solar_conformance.backends.kind import upstream_images
from solar_conformance.backends.kind.upstream_images import binary_images, engine_images
from solar_conformance.backends.kind.upstream_source import (
    PROGRAMS,
    BadUpstream,
    ChartSource,
    UpstreamSolar,
    fetch_chart,
)
from tests.project_runs import one_line_exit_4, project_folder, run_pytest

CHART_YAML = "apiVersion: v2\nname: solar\nversion: 0.3.0\nappVersion: 0.3.0\n"
VALUES = (
    "apiserver:\n  image:\n    repository: ghcr.io/o/solar-apiserver\n    tag: ''\n"
    "controller:\n  image:\n    repository: ghcr.io/o/solar-controller-manager\n    tag: ''\n"
    "renderer:\n  image:\n    repository: ghcr.io/o/solar-renderer\n    tag: '1.2'\n"
)
IMAGES = ",".join(f"localhost/local/{p}:e2e" for p in PROGRAMS)


def _folder(where: Path) -> Path:
    (where / "templates").mkdir(parents=True)
    (where / "Chart.yaml").write_text(CHART_YAML)
    (where / "values.yaml").write_text(VALUES)
    return where


def _package(where: Path, files: dict[str, str] | None = None) -> Path:
    """A chart packaged as `helm package` lays it out: every file under `solar/`."""
    files = {"Chart.yaml": CHART_YAML, "values.yaml": VALUES} if files is None else files
    with tarfile.open(where, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(f"solar/{name}")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return where


# --- the chart ---------------------------------------------------------------------------------
def test_an_oci_reference_is_taken_with_its_version() -> None:
    upstream = UpstreamSolar.from_options(None, "oci://ghcr.io/o/charts/solar", "0.3.0")
    assert upstream.chart == ChartSource("oci://ghcr.io/o/charts/solar", "0.3.0")
    assert upstream.chart.describe() == "oci://ghcr.io/o/charts/solar:0.3.0"
    assert upstream.images == {} and upstream.binaries == {}, "the chart's own images"


@pytest.mark.parametrize(
    "reference", ["oci://ghcr.io/o/charts/solar:0.3.0", "oci://ghcr.io", "oci:///charts/solar"]
)
def test_a_malformed_oci_reference_is_refused(reference: str) -> None:
    with pytest.raises(BadUpstream, match="not a chart reference"):
        UpstreamSolar.from_options(None, reference)


def test_a_packaged_chart_is_taken_and_its_version_read(tmp_path: Path) -> None:
    upstream = UpstreamSolar.from_options(None, str(_package(tmp_path / "solar-0.3.0.tgz")))
    assert upstream.chart.version == "0.3.0"


def test_a_tgz_that_is_no_chart_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "solar.tgz"
    junk.write_bytes(b"not gzip")
    with pytest.raises(BadUpstream, match="not a packaged Helm chart"):
        UpstreamSolar.from_options(None, str(junk))
    empty = _package(tmp_path / "empty.tgz", {"values.yaml": VALUES})
    with pytest.raises(BadUpstream, match="not a packaged Helm chart"):
        UpstreamSolar.from_options(None, str(empty))


def test_a_version_the_chart_does_not_have_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        BadUpstream, match=r"--solar-upstream-version 0\.2\.1: .* is version 0\.3\.0"
    ):
        UpstreamSolar.from_options(None, str(_folder(tmp_path / "solar")), "0.2.1")


def test_the_chart_had_names_its_own_images(tmp_path: Path) -> None:
    chart = fetch_chart(Path("helm"), ChartSource(str(_folder(tmp_path / "c"))), tmp_path, print)
    assert chart.default_images() == {
        "solar-apiserver": "ghcr.io/o/solar-apiserver:0.3.0",
        "solar-controller-manager": "ghcr.io/o/solar-controller-manager:0.3.0",
        "solar-renderer": "ghcr.io/o/solar-renderer:1.2",
    }
    package = fetch_chart(
        Path("helm"), ChartSource(str(_package(tmp_path / "s.tgz"))), tmp_path, print
    )
    assert package.default_images() == chart.default_images()
    assert package.version == "0.3.0"


# --- the programs ------------------------------------------------------------------------------
def test_images_by_reference_are_matched_to_their_programs() -> None:
    upstream = UpstreamSolar.from_options(None, "oci://h/c/solar", None, [IMAGES])
    assert upstream.images["solar-renderer"] == "localhost/local/solar-renderer:e2e"
    repeated = UpstreamSolar.from_options(None, "oci://h/c/solar", None, IMAGES.split(","))
    assert repeated.images == upstream.images


@pytest.mark.parametrize(
    ("images", "words"),
    [
        (IMAGES.rsplit(",", 1)[0], "names no image of solar-renderer"),
        (IMAGES + ",x/solar-apiserver:1", "names solar-apiserver twice"),
        (IMAGES.replace("solar-renderer", "renderer"), "names none of"),
        (IMAGES.replace("solar-renderer:e2e", "solar-renderer@sha256:ab"), "not a digest"),
    ],
)
def test_images_that_do_not_name_each_program_once_are_refused(images: str, words: str) -> None:
    with pytest.raises(BadUpstream, match=words):
        UpstreamSolar.from_options(None, "oci://h/c/solar", None, [images])


def test_binaries_and_images_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadUpstream, match="give one of them"):
        UpstreamSolar.from_options(tmp_path, "oci://h/c/solar", None, [IMAGES])


class _Images:
    """The part of docker-py's image collection the harness uses."""

    def __init__(self, present: dict[str, dict[str, Any]], pullable: set[str]) -> None:
        self.present, self.pullable = present, pullable

    def get(self, reference: str) -> Any:
        if reference not in self.present:
            raise ImageNotFound(reference)
        return type("Image", (), {"attrs": self.present[reference], "id": "sha256:1d"})()

    def pull(self, repository: str, tag: str) -> None:
        reference = f"{repository}:{tag}"
        if reference not in self.pullable:
            raise APIError("pull", explanation=f"manifest for {reference} not found")
        self.present[reference] = {"RepoDigests": [f"{repository}@sha256:d1"]}


def _client(present: dict[str, dict[str, Any]], pullable: frozenset[str] = frozenset()) -> Any:
    return type("Client", (), {"images": _Images(present, set(pullable))})()


def test_offline_an_image_must_be_in_the_engine() -> None:
    with pytest.raises(BadUpstream, match="not in the local Docker engine"):
        engine_images(_client({}), {"solar-apiserver": "x/solar-apiserver:1"}, False, print)
    found = engine_images(
        _client({"x/solar-apiserver:1": {}}),
        {"solar-apiserver": "x/solar-apiserver:1"},
        False,
        print,
    )
    assert found == {"solar-apiserver": "sha256:1d"}, "no registry digest: the image ID"


def test_offline_a_renderer_tagged_latest_is_refused() -> None:
    with pytest.raises(BadUpstream, match="tagged latest"):
        engine_images(
            _client({"x/solar-renderer": {}}), {"solar-renderer": "x/solar-renderer"}, False, print
        )


def test_online_an_image_is_pulled_and_named_by_its_digest() -> None:
    client = _client({}, frozenset({"x/solar-apiserver:1"}))
    found = engine_images(client, {"solar-apiserver": "x/solar-apiserver:1"}, True, print)
    assert found == {"solar-apiserver": "sha256:d1"}
    with pytest.raises(BadUpstream, match="cannot be pulled: manifest for x/solar-apiserver:2"):
        engine_images(client, {"solar-apiserver": "x/solar-apiserver:2"}, True, print)


class _Built(_Images):
    """An engine that has every image already: nothing is built."""

    def get(self, reference: str) -> Any:
        return type("Image", (), {"attrs": {}, "id": "sha256:1d"})()


def test_a_binarys_image_is_named_by_the_layout_of_scratch_images_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "solar-renderer"
    binary.write_bytes(b"\x7fELF")
    client = type("Client", (), {"images": _Built({}, set())})()
    before = binary_images(client, {"solar-renderer": binary}, print)
    monkeypatch.setattr(upstream_images, "SCRATCH_LAYOUT", "another layout")
    after = binary_images(client, {"solar-renderer": binary}, print)
    assert before["solar-renderer"].startswith("solar-conformance/solar-renderer:")
    assert after != before, "a new layout is a new image"


# --- a run, refused before any scenario --------------------------------------------------------
@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_folder(tmp_path)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--solar-upstream-chart=oci://h/c/solar:1",), ("not a chart reference",)),
        (("--solar-upstream-chart=nowhere",), ("'nowhere': no such file or folder",)),
        (("--solar-upstream-chart=x.tgz",), ("'x.tgz': no such file or folder",)),
        (("--solar-upstream-chart=features",), ("not a Helm chart", "features")),
        (("--solar-upstream-chart=",), ("--solar-upstream-chart '': names no chart",)),
        (
            ("--solar-upstream-chart=https://example.com/charts/solar",),
            ("only oci:// references are pulled",),
        ),
        (
            ("--solar-upstream-chart=oci://h/c/solar", "--solar-upstream-bin=nowhere"),
            ("--solar-upstream-bin nowhere: no such folder",),
        ),
        (
            ("--solar-upstream-chart=oci://h/c/solar", "--solar-upstream-images=a/b:1"),
            ("names none of",),
        ),
    ],
)
def test_a_run_with_a_chart_or_images_unusable_stops_in_one_line(
    project: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    result = run_pytest(
        project,
        "features/create_target.feature",
        "--solar-env=kind",
        "--solar-impl=upstream",
        *args,
    )
    one_line_exit_4(result, *words)


def test_upstreams_options_are_refused_beside_the_reference(project: Path) -> None:
    result = run_pytest(project, "features/create_target.feature", "--solar-upstream-version=0.3.0")
    one_line_exit_4(result, "--solar-upstream-version is used only with --solar-impl=upstream")


# --- `solar-conformance kind up` ---------------------------------------------------------------
def test_kind_up_refuses_upstream_it_cannot_use_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from solar_conformance.backends.kind.__main__ import main

    state = tmp_path / "state"
    assert main(["up", f"--state-dir={state}", "--solar-upstream-chart=oci://h/c/solar"]) == 4
    assert main(["up", f"--state-dir={state}", "--solar-impl=upstream"]) == 4
    lines = capsys.readouterr().err.splitlines()
    assert "used only with --solar-impl upstream" in lines[0]
    assert "needs --solar-upstream-chart" in lines[1]
    assert not state.exists(), "nothing started, nothing written"


def test_kind_up_hands_upstream_to_the_holder_as_given() -> None:
    from solar_conformance.backends.kind.__main__ import _passed_on, _upstream

    args = SimpleNamespace(
        solar_impl="upstream",
        solar_kind_images="online",
        solar_upstream_chart="oci://h/c/solar",
        solar_upstream_version="0.3.0",
        solar_upstream_images=IMAGES.split(","),
        solar_upstream_bin=None,
    )
    passed = _passed_on(args)  # type: ignore[arg-type]
    assert passed[:2] == ["--solar-impl=upstream", "--solar-kind-images=online"]
    assert "--solar-upstream-version=0.3.0" in passed
    assert sum(p.startswith("--solar-upstream-images=") for p in passed) == 3
    upstream = _upstream(args)  # type: ignore[arg-type]
    assert upstream.chart == ChartSource("oci://h/c/solar", "0.3.0")
    assert sorted(upstream.images) == sorted(PROGRAMS)
