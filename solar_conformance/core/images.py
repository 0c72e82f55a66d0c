"""Container image references as a kubelet reads them: `[host[:port]/]path[:tag][@digest]`."""

from __future__ import annotations


def image_repository(reference: str) -> str:
    """The repository an image reference names, without its tag and digest:
    `registry.example:5000/solar-agent:0.1.0@sha256:...` is `registry.example:5000/solar-agent`.
    The digest follows the `@`; the tag follows the last `:` after the last `/` (a `:` before
    it separates a registry host from its port)."""
    name = reference.partition("@")[0]
    tag_colon = name.rfind(":")
    return name[:tag_colon] if tag_colon > name.rfind("/") else name
