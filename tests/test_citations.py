"""Every citation in the repository can be followed from a clone of it.

The course cites a source as ``[@key]`` (several: ``[@key1; @key2]``, with a locator: ``[@llama3, Table 5]``),
where ``key`` is a row of ``data/sources.csv``; ``SOURCES.md`` is generated from that file. These
tests scan every text file of the repository (code, data, notebooks, README, ANSWER_SHEET, SOURCES;
not ``.git``, ``.venv``, ``build`` or caches) and fail when a file

* names the team's private notes file (it is not in the repository) or a path outside it,
* names a repository file path (under data/, benchmarks/, notebooks/, solutions/, exercises/,
  tests/, scripts/ or course_lib/, with a file suffix) that does not exist; ``NN`` (a notebook
  number), ``slug`` and ``*`` are placeholders,
* cites a key that ``data/sources.csv`` does not hold,

and when a row of ``data/sources.csv`` is cited nowhere, or SOURCES.md is out of date.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib import citations, data

ROOT = Path(__file__).resolve().parent.parent

# The team's private notebook of outside numbers: never cited by the course (spelled in two parts
# so that this file does not name it).
PRIVATE_NOTES = "facts" + ".md"
OUTSIDE = ("shared/reference",)  # paths outside the repository that citations must not point at

# TODO(lead): files the lead is rewriting that still name the private notes file; the lead empties
# this list (a file that no longer names it must leave the list: test_pending_list_is_current).
LEAD_OWNED_PENDING: list[str] = []

SKIP_DIRS = {".git", ".venv", "build", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".hypothesis",
             ".ruff_cache", "node_modules"}
TEXT_SUFFIXES = {".py", ".md", ".csv", ".ipynb", ".txt", ".cfg", ".toml", ".yml", ".yaml", ".json", ".ini", ".sh", ".rst"}
TEXT_NAMES = {"Makefile", "run"}
# The bibliography itself lists every key; it does not count as a citation of them.
BIBLIOGRAPHY = {"data/sources.csv", "SOURCES.md"}
THIS_FILE = "tests/test_citations.py"  # it spells out the forms it checks
PLACEHOLDER_KEYS = {"key", "key1", "key2"}  # how the docs write the citation form itself
# Paths that are named on purpose and are not in the repository, with the reason.
ALLOWED_MISSING = {
    "notebooks/00-broken.ipynb": "the failing notebook tests/papermill/test_papermill.py writes into a temporary folder",
}

CITE = re.compile(r"\[(@[^\[\]]*)\]")
KEY = re.compile(r"@([A-Za-z0-9][A-Za-z0-9_-]*)")
PREFIXES = "data|benchmarks|notebooks|solutions|exercises|tests|scripts|course_lib"
PATH = re.compile(
    rf"(?<![\w./~-])((?:{PREFIXES})/[\w./*-]*[\w*]\.(?:csv|md|ipynb|py|json|cfg|txt|toml|yml|yaml))(?![\w/])"
)


# course_lib.citations (first, so that a mutation run stops here before the repository scan).

@pytest.fixture
def bib(monkeypatch):
    """A small bibliography in place of data/sources.csv: every author form :func:`citations._names` knows."""
    rows = {k: {"key": k, "authors": a, "year": y} for k, a, y in [
        ("one", "John W. Young", "1974"),
        ("two", "Jane Roe, John Doe", "2001"),
        ("three", "Ann Lee, Bo Kim, Cy Park", "2002"),
        ("etal", "Ziheng Jiang, et al.", "2024"),
        ("etal2", "Borui Wan, Mingji Han, et al.", "2025"),
        ("short", "Llama Team, AI @ Meta (Grattafiori et al.)", "2024"),
        ("org", "Meta and IBM Research (PyTorch blog)", "2024"),
        ("orgc", "Gemini Team, Google", "2023"),
        ("dup-x", "PyTorch contributors", "2026"),
        ("dup-y", "Some Body", "2026"),
        ("dup-z", "PyTorch contributors", "2026"),
    ]}
    monkeypatch.setattr(citations, "_rows", lambda: rows)
    citations._labels.cache_clear()
    yield rows
    citations._labels.cache_clear()


@pytest.mark.parametrize("key, label", [
    ("one", "Young 1974"),                    # one person: the surname (not the initial W.)
    ("two", "Roe and Doe 2001"),              # two people
    ("three", "Lee et al. 2002"),             # three
    ("etal", "Jiang et al. 2024"),            # one person and "et al."
    ("etal2", "Wan et al. 2025"),             # two people and "et al."
    ("short", "Grattafiori et al. 2024"),     # the paper's own short form in parentheses
    ("org", "Meta and IBM Research 2024"),    # an organisation, up to its parenthesis
    ("orgc", "Gemini Team 2023"),             # an organisation, up to its comma
    ("dup-x", "PyTorch contributors 2026a"),  # one author-year twice: a, b in the bibliography's order
    ("dup-y", "Body 2026"),
    ("dup-z", "PyTorch contributors 2026b"),
])
def test_author_year_labels(bib, key, label):
    assert citations.author_year(key) == label


def test_names_of_a_bare_et_al_is_taken_as_it_is(bib):
    assert citations._names("et al.") == "et al."


def test_an_unknown_key_is_refused(bib):
    with pytest.raises(ValueError, match="key must be a key of data/sources.csv"):
        citations.author_year("nokey")


def test_render_replaces_each_group_and_leaves_unknown_keys_raw(bib):
    text = "as [@one] and [@two; @etal] found, unlike [@one; @nokey] and [@nokey]; not [one] or @one."
    assert citations.render(text, citations.plain) == (
        "as (Young 1974) and (Roe and Doe 2001; Jiang et al. 2024) found, unlike [@one; @nokey] and [@nokey];"
        " not [one] or @one.")
    assert citations.render("[@dup-z]", citations.markdown_link()) == "([PyTorch contributors 2026b](SOURCES.md#dup-z))"
    assert citations.render("[@one]", citations.markdown_link("../SOURCES.md")) == "([Young 1974](../SOURCES.md#one))"
    assert citations.render("[@one]", lambda key, label: key.upper()) == "(ONE)"


def test_the_course_bibliography_labels():
    # data/sources.csv as it stands: the module docstring's example, and the three "PyTorch contributors 2026"
    assert citations.author_year("llama3") == "Grattafiori et al. 2024"
    assert citations.author_year("young1974") == "Young 1974"
    assert [citations.author_year(k) for k in ("pytorch-docs", "torchrun-source", "torch-rdzv-source")] == [
        "PyTorch contributors 2026a", "PyTorch contributors 2026b", "PyTorch contributors 2026c"]


def repo_files() -> list[Path]:
    out = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts[:-1]) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            out.append(path)
    return out


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def cited_keys(text: str) -> set[str]:
    return {k for group in CITE.findall(text) for k in KEY.findall(group)}


def path_exists(name: str) -> bool:
    """A repository path, allowing the placeholders the docs use (``NN`` for a notebook number, ``*``)."""
    pattern = name.replace("NN", "[0-9][0-9]").replace("slug", "*")
    if any(c in pattern for c in "*["):
        return any(ROOT.glob(pattern))
    return (ROOT / pattern).exists()


FILES = repo_files()


def test_allowed_missing_paths_are_still_missing_and_named():
    for name in ALLOWED_MISSING:
        assert not path_exists(name), f"{name} exists now: remove it from ALLOWED_MISSING"


def test_the_scan_sees_the_course():
    names = {rel(p) for p in FILES}
    for must in ("README.md", "ANSWER_SHEET.md", "SOURCES.md", "data/sources.csv", "data/MANIFEST.csv",
                 "course_lib/data.py", "notebooks/src/01-per-gpu-failure-rate.py", "notebooks/01-per-gpu-failure-rate.ipynb"):
        assert must in names, f"{must} not scanned"
    assert not any(n.startswith((".venv/", "build/", ".git/")) for n in names)


def test_no_file_cites_the_private_notes_or_outside_paths():
    bad = []
    for path in FILES:
        if rel(path) in LEAD_OWNED_PENDING or rel(path) == THIS_FILE:
            continue
        for i, line in enumerate(_text(path).splitlines(), start=1):
            if PRIVATE_NOTES in line or any(o in line for o in OUTSIDE):
                bad.append(f"{rel(path)}:{i}: {line.strip()[:120]}")
    assert not bad, "cite a primary source or a key of data/sources.csv ([@key]) instead:\n" + "\n".join(bad)


def test_pending_list_is_current():
    for name in LEAD_OWNED_PENDING:
        path = ROOT / name
        assert path.exists(), f"{name} is in LEAD_OWNED_PENDING but does not exist"
        assert PRIVATE_NOTES in _text(path), f"{name} no longer names the private notes: remove it from LEAD_OWNED_PENDING"


def test_every_named_repository_path_exists():
    missing = []
    for path in FILES:
        if rel(path) == THIS_FILE:
            continue
        for i, line in enumerate(_text(path).splitlines(), start=1):
            for name in PATH.findall(line):
                if name not in ALLOWED_MISSING and not path_exists(name):
                    missing.append(f"{rel(path)}:{i}: {name}")
    assert not missing, "these files are named but not in the repository:\n" + "\n".join(sorted(set(missing)))


def test_every_cited_key_is_in_the_bibliography():
    keys = set(data.sources()["key"])
    unknown = []
    for path in FILES:
        if rel(path) in BIBLIOGRAPHY or rel(path) == THIS_FILE:
            continue
        for i, line in enumerate(_text(path).splitlines(), start=1):
            for key in sorted(cited_keys(line) - keys - PLACEHOLDER_KEYS):
                unknown.append(f"{rel(path)}:{i}: [@{key}]")
    assert not unknown, "keys cited but missing from data/sources.csv:\n" + "\n".join(unknown)


def test_every_source_is_cited_somewhere():
    keys = set(data.sources()["key"])
    cited = set()
    for path in FILES:
        if rel(path) not in BIBLIOGRAPHY and rel(path) != THIS_FILE:
            cited |= cited_keys(_text(path))
    assert not keys - cited, f"rows of data/sources.csv cited nowhere as [@key]: {sorted(keys - cited)}"


def test_sources_rows_are_complete_and_keys_unique():
    t = data.sources()
    keys = list(t["key"])
    assert len(keys) == len(set(keys)), "duplicate keys in data/sources.csv"
    for row in t.rows:
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", row["key"]), f"key {row['key']!r}: lower case, digits and '-' only"
        for col in ("authors", "title", "venue", "year", "url", "note"):
            assert str(row[col]).strip(), f"{row['key']}: {col} is empty"
        url = row["url"]
        assert url.startswith("https://") or path_exists(url), f"{row['key']}: url {url!r} is neither https nor a repository file"


def test_sources_md_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "render_sources.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("text, keys", [
    ("see [@llama3, Table 5]", {"llama3"}),
    ("[@kokolis2025; @megascale]", {"kokolis2025", "megascale"}),
    ("no citation @here or [here]", set()),
])
def test_citation_form(text, keys):
    assert cited_keys(text) == keys


@pytest.mark.parametrize("text, paths", [
    ("`data/levers.csv`, and notebooks/NN-slug.ipynb", ["data/levers.csv", "notebooks/NN-slug.ipynb"]),
    ("/work/x/data/levers.csv build/notebooks/a.ipynb torch/distributed/run.py", []),
])
def test_path_form(text, paths):
    assert PATH.findall(text) == paths
