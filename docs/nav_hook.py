"""mkdocs hook: a page in docs/ that mkdocs.yml's nav does not list goes under "More", titled by its first heading.

So a branch that adds docs/some-page.md builds (and shows the page) without touching mkdocs.yml; giving the
page its place is one line in nav.
"""

from __future__ import annotations

import re
from pathlib import Path

MORE = "More"


def _listed(items) -> set[str]:
    found: set[str] = set()
    for item in items or []:
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            for value in item.values():
                found |= _listed(value) if isinstance(value, list) else {value}
    return found


def _title(path: Path) -> str:
    match = re.search(r"(?m)^# (.+)$", path.read_text(encoding="utf-8"))
    return match.group(1).strip() if match else path.stem.replace("-", " ").capitalize()


def unlisted_pages(docs_dir: Path, nav) -> list[dict[str, str]]:
    """``{title: path}`` for every ``.md`` under ``docs_dir`` that ``nav`` does not name, sorted by path."""
    listed = _listed(nav)
    pages = sorted(p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.md"))
    return [{_title(docs_dir / page): page} for page in pages if page not in listed]


def on_config(config):
    if config.nav is None:  # no nav: mkdocs lists every page itself
        return config
    extra = unlisted_pages(Path(config.docs_dir), config.nav)
    if extra:
        config.nav = [*config.nav, {MORE: extra}]
    return config
