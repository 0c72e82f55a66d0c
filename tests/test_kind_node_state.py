"""What a kind node's logs tell the user about the host."""

from __future__ import annotations

from pathlib import Path

from fixtures.kind.node_state import host_limit_hint

KUBELET_OUT_OF_INOTIFY = (
    'kubelet: E1203 17:13:24 manager.go:294] "Registration of the raw container factory '
    'failed: inotify_init: too many open files"'
)


def test_a_node_out_of_inotify_instances_names_the_host_limit_and_its_fix(tmp_path: Path) -> None:
    limit = tmp_path / "max_user_instances"
    limit.write_text("128\n")
    hint = host_limit_hint(KUBELET_OUT_OF_INOTIFY, str(limit))
    assert "fs.inotify.max_user_instances is 128" in hint
    assert "sysctl -w fs.inotify.max_user_instances=" in hint
    assert "\n" not in hint


def test_other_node_errors_get_no_hint(tmp_path: Path) -> None:
    assert host_limit_hint("containerd: failed to load plugin devmapper", str(tmp_path)) == ""


def test_an_unreadable_limit_still_gives_the_fix(tmp_path: Path) -> None:
    hint = host_limit_hint(KUBELET_OUT_OF_INOTIFY, str(tmp_path / "absent"))
    assert "is unknown" in hint and "sysctl -w" in hint
