"""Output files written atomically (``memgauge._files``): a new file as ``open`` would make it, an
old one replaced whole, nothing of ours left behind when the write fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgauge._errors import OutputError
from memgauge._files import remove_tree, write_output, write_text_atomic


def test_a_written_file_has_the_mode_open_gives_and_replaces_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_text("old and longer than the new text\n")
    old = os.umask(0o027)
    try:
        write_text_atomic(target, "new\n")
    finally:
        os.umask(old)
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    # the rename fails: the target is a non-empty directory
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("x")
    with pytest.raises(OutputError, match=r"cannot write profile to .*taken"):
        write_text_atomic(target, "text", "profile")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_a_name_without_a_directory_is_written_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_output("bare.json", "{}", "profile")
    assert (tmp_path / "bare.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare.json"]


def test_remove_tree_removes_what_a_directory_holds_and_follows_no_link(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "file").write_text("x")
    tree = tmp_path / "tree"
    (tree / "sub" / "deeper").mkdir(parents=True)
    (tree / "a.jsonl").write_text("{}")
    (tree / "sub" / "deeper" / "b.json").write_text("{}")
    (tree / "to-dir").symlink_to(kept)
    (tree / "sub" / "to-file").symlink_to(kept / "file")
    remove_tree(str(tree))
    assert not tree.exists() and not tree.is_symlink()
    assert (kept / "file").read_text() == "x"
    remove_tree(str(tree))  # gone already: nothing to do, no error
