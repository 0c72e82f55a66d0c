"""The docs' relative links resolve, to a file and to a heading (GitHub's anchors), and the README
stays short.

Links are read as GitHub renders them: `[text](target)`, `![alt](target)` and `[label]: target`,
outside fenced code blocks and code spans. A target with a scheme (`https:`, `mailto:`) is not
checked; every other one must name a file or folder of the checkout, and its `#anchor` a heading
of the markdown file it names (or of the file itself, for a bare `#anchor`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 150


def checked_documents() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *docs]


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    line: int
    target: str


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code blocks, with its number."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            continue
        yield number, line


def rendered_heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: code spans keep their content, links their text,
    emphasis markers and HTML tags go."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)


def github_anchor(heading_text: str) -> str:
    """GitHub's anchor of a heading: lower case, every character but letters, digits, `_`, `-`
    and spaces dropped, each space a `-`."""
    kept = re.sub(r"[^\w\- ]", "", heading_text.lower())
    return kept.replace(" ", "-")


def anchors_of(document: Path) -> set[str]:
    """Every anchor GitHub gives a markdown file: one per heading (a repeated one numbered -1,
    -2, ...) and the explicit `<a name=...>` / `<a id=...>`."""
    text = document.read_text(encoding="utf-8")
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        anchors.update(HTML_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if not heading:
            continue
        anchor = github_anchor(rendered_heading_text(heading.group(2)))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def links_of(document: Path) -> Iterator[Link]:
    for number, line in prose_lines(document.read_text(encoding="utf-8")):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            yield Link(number, definition.group(1))
            continue
        without_code = CODE_SPAN.sub("", line)
        for match in INLINE_LINK.finditer(without_code):
            yield Link(number, match.group(1))


def problem_of(document: Path, link: Link) -> str | None:
    """Why a link does not resolve, or None when it does."""
    if SCHEME.match(link.target):
        return None
    path_part, _, anchor = link.target.partition("#")
    target = document if not path_part else (document.parent / unquote(path_part)).resolve()
    if not target.exists():
        return f"{path_part} does not exist"
    if ROOT not in (target, *target.parents):
        return f"{path_part} is outside the repository"
    is_markdown = target.suffix == ".md" and target.is_file()
    if anchor and is_markdown and unquote(anchor) not in anchors_of(target):
        return f"{target.relative_to(ROOT)} has no heading with the anchor #{anchor}"
    return None


def test_the_checked_documents_exist() -> None:
    missing = [str(path.relative_to(ROOT)) for path in checked_documents() if not path.is_file()]
    assert not missing, f"missing: {', '.join(missing)}"


@pytest.mark.parametrize(
    "document",
    [path for path in checked_documents() if path.is_file()],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_every_relative_link_resolves(document: Path) -> None:
    broken = [
        f"{document.relative_to(ROOT)}:{link.line}: ({link.target}) {problem}"
        for link in links_of(document)
        if (problem := problem_of(document, link)) is not None
    ]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_is_short() -> None:
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines; at most {README_MAX_LINES}: move the details into docs/"
    )


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The verdict", "the-verdict"),
        ("`solar-conformance local up`", "solar-conformance-local-up"),
        ("Bad input: what is refused", "bad-input-what-is-refused"),
        (
            "Upstream SolAr on `kind` (`--solar-impl=upstream`)",
            "upstream-solar-on-kind---solar-implupstream",
        ),
        (
            "The render registry: zot beside Distribution",
            "the-render-registry-zot-beside-distribution",
        ),
        ("[Linked](other.md) heading", "linked-heading"),
        ("Start → first report", "start--first-report"),
        ("snake_case_name", "snake_case_name"),
    ],
)
def test_anchors_follow_github(heading: str, anchor: str) -> None:
    assert github_anchor(rendered_heading_text(heading)) == anchor


def test_a_repeated_heading_is_numbered(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Figures\n\n```\n# not a heading\n```\n\n## Figures\n## Figures\n")
    assert anchors_of(page) == {"figures", "figures-1", "figures-2"}


def test_links_in_code_are_not_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '[a](a.md) `[b](b.md)`\n```\n[c](c.md)\n```\n[d]: d.md#x\n![e](img/e.png "title")\n'
    )
    assert [link.target for link in links_of(page)] == ["a.md", "d.md#x", "img/e.png"]
