"""A `FROM scratch` image's build context: its files, a /tmp any user can write, a Dockerfile."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from solar_conformance.provision.images.common import ScratchImage, scratch_context


def _context(image: ScratchImage) -> tarfile.TarFile:
    return tarfile.open(fileobj=io.BytesIO(scratch_context(image)), mode="r")


def _dockerfile(context: tarfile.TarFile) -> list[str]:
    member = context.extractfile("Dockerfile")
    assert member is not None
    return member.read().decode().splitlines()


def _image(tmp_path: Path, user: str | None = "65532") -> ScratchImage:
    program = tmp_path / "program"
    program.write_bytes(b"\x7fELF")
    helper = tmp_path / "helper"
    helper.write_bytes(b"#!")
    files = {"/usr/bin/program": program, "/etc/helper": helper}
    return ScratchImage("example/program:1", files, ("/usr/bin/program", "--serve"), user=user)


def test_tmp_is_copied_from_a_rootfs_with_the_sticky_bit_and_everyones_write(
    tmp_path: Path,
) -> None:
    context = _context(_image(tmp_path))
    rootfs, tmp = context.getmember("rootfs"), context.getmember("rootfs/tmp")
    assert rootfs.isdir() and rootfs.mode == 0o755
    assert tmp.isdir() and tmp.mode == 0o1777
    # COPY would make a named destination 0755; the root's children keep their own modes.
    assert "COPY rootfs /" in _dockerfile(context)
    assert not any(line.endswith(" /tmp") for line in _dockerfile(context))


def test_each_file_is_copied_to_its_path_in_the_image(tmp_path: Path) -> None:
    context = _context(_image(tmp_path))
    lines = _dockerfile(context)
    assert lines[:3] == ["FROM scratch", "COPY file-0 /etc/helper", "COPY file-1 /usr/bin/program"]
    copied = {name: context.extractfile(name) for name in ("file-0", "file-1")}
    assert {name: f.read() for name, f in copied.items() if f} == {
        "file-0": b"#!",
        "file-1": b"\x7fELF",
    }


def test_the_dockerfile_ends_with_env_user_and_the_entrypoint(tmp_path: Path) -> None:
    lines = _dockerfile(_context(_image(tmp_path)))
    assert lines[-3:] == [
        "ENV PATH=/usr/local/bin:/usr/bin:/bin",
        "USER 65532",
        'ENTRYPOINT ["/usr/bin/program", "--serve"]',
    ]


def test_without_a_user_there_is_no_user_line(tmp_path: Path) -> None:
    lines = _dockerfile(_context(_image(tmp_path, user=None)))
    assert not any(line.startswith("USER") for line in lines)
    assert lines[-1] == 'ENTRYPOINT ["/usr/bin/program", "--serve"]'
