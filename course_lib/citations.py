"""Citations as a reader sees them: ``[@key]`` -> "(Grattafiori et al. 2024)", linked to the bibliography.

The course cites a source as ``[@key]`` (several: ``[@key1; @key2]``), a key of ``data/sources.csv``
(:data:`course_lib.data.CITATION`); ``SOURCES.md`` lists every key with an anchor. Markup is for the
authors: a learner reads author and year. :func:`render` replaces each citation group in a text with
"(Author Year; Author Year)", each name formatted by a function of (key, label): a markdown link for
notebook 12's drill (:func:`markdown_link`), an HTML link for the website (scripts/build_site.py), plain
text where no link can go (:func:`plain`, e.g. inside a printed output). An unknown key stays as it is
(tests/test_citations.py checks that every cited key exists).
"""
from __future__ import annotations

import functools
import re
from typing import Callable

__all__ = ["CITE", "author_year", "render", "markdown_link", "plain"]

#: One citation group, ``[@key]`` or ``[@key1; @key2]``; group 1 is the inside.
CITE = re.compile(r"\[(@[A-Za-z0-9][\w-]*(?:\s*;\s*@[A-Za-z0-9][\w-]*)*)\]")
_KEY = re.compile(r"@([A-Za-z0-9][\w-]*)")
_PERSON = re.compile(r"[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)+")


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, dict]:
    from .data import sources

    return {r["key"]: r for r in sources().rows}


def _names(authors: str) -> str:
    """'Borui Wan, Mingji Han, et al.' -> 'Wan et al.'; 'John T. Daly' -> 'Daly'; an organisation as it is named."""
    inner = re.search(r"\(([^()]*et al\.)\)", authors)
    if inner:  # "Llama Team, AI @ Meta (Grattafiori et al.)": the paper's own short form
        return inner.group(1)
    parts = [p.strip() for p in authors.split(",") if p.strip()]
    people = [p for p in parts if p != "et al."]
    if people and all(_PERSON.fullmatch(p) for p in people):
        surnames = [p.split()[-1] for p in people]
        if len(surnames) == 1 and len(parts) == 1:
            return surnames[0]
        if len(surnames) == 2 and len(parts) == 2:
            return f"{surnames[0]} and {surnames[1]}"
        return f"{surnames[0]} et al."
    return re.split(r" \(|,", authors)[0].strip()  # an organisation: "PyTorch contributors", "Gemini Team"


@functools.lru_cache(maxsize=1)
def _labels() -> dict[str, str]:
    """Every key's label; two sources with one author-year get 'a', 'b', ... in the bibliography's order."""
    plain_labels = {k: f"{_names(r['authors'])} {r['year']}" for k, r in _rows().items()}
    out = {}
    for key, label in plain_labels.items():
        same = [k for k, v in plain_labels.items() if v == label]
        out[key] = label if len(same) == 1 else label + "abcdefghijklmnopqrstuvwxyz"[same.index(key)]
    return out


def author_year(key: str) -> str:
    """The label a reader sees for ``key``: 'Grattafiori et al. 2024' (ValueError for an unknown key)."""
    if key not in _rows():
        raise ValueError(f"key must be a key of data/sources.csv (got {key!r})")
    return _labels()[key]


def render(text: str, fmt: Callable[[str, str], str]) -> str:
    """``text`` with every citation group as "(A 2024; B 2025)", each name ``fmt(key, label)``; unknown keys stay raw."""
    known = _rows()

    def group(m: re.Match) -> str:
        keys = _KEY.findall(m.group(1))
        if not all(k in known for k in keys):
            return m.group(0)
        return "(" + "; ".join(fmt(k, author_year(k)) for k in keys) + ")"

    return CITE.sub(group, text)


def markdown_link(sources_md: str = "SOURCES.md") -> Callable[[str, str], str]:
    """A ``fmt`` for :func:`render`: a markdown link to the key's anchor in ``sources_md`` (a path relative to the text)."""
    return lambda key, label: f"[{label}]({sources_md}#{key})"


def plain(key: str, label: str) -> str:
    """A ``fmt`` for :func:`render`: the label alone."""
    return label
