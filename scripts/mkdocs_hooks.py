"""mkdocs hooks for the documentation site (mkdocs.yml): the exit-code table lives in README.md,
where the front page shows it; the site's exit-codes page takes it from there, so there is one copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLACEHOLDER = "<!-- exit-codes: README.md -->"


def readme_section(readme: str, heading: str) -> str:
    """The body of README's ``## heading`` section, up to the next ``## `` heading."""
    lines = readme.splitlines()
    start = lines.index(f"## {heading}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip() + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    readme = (Path(config["config_file_path"]).parent / "README.md").read_text()
    return markdown.replace(PLACEHOLDER, readme_section(readme, "Exit codes"))
