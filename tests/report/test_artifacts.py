"""Artifact folders: slugs, collisions across workers and reruns, retention."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_guistate.report.artifacts import (
    MAX_SLUG,
    create_test_folder,
    discard_folder,
    should_retain,
    slug_nodeid,
)


def test_slug_is_readable_for_plain_ids() -> None:
    assert slug_nodeid("tests/test_login.py::TestX::test_a") == "tests-test_login.py-TestX-test_a"


def test_lossy_slugs_get_a_hash_so_distinct_ids_stay_distinct() -> None:
    a = slug_nodeid("tests/t.py::test_x[a b]")
    b = slug_nodeid("tests/t.py::test_x[a_b]")
    c = slug_nodeid("tests/t.py::test_x[a/b]")
    assert len({a, b, c}) == 3
    assert all(s.startswith("tests-t.py-test_x-a") for s in (a, b, c))
    for slug in (a, b, c):
        assert set(slug) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def test_long_ids_are_capped_with_a_stable_hash() -> None:
    nodeid = "tests/test_long.py::test_case[" + "x" * 300 + "]"
    slug = slug_nodeid(nodeid)
    assert len(slug) <= MAX_SLUG
    assert slug == slug_nodeid(nodeid)
    assert slug != slug_nodeid(nodeid.replace("x]", "y]"))


def test_unicode_and_hostile_ids_are_file_system_safe() -> None:
    slug = slug_nodeid("tests/t.py::test_ü[../../etc/passwd\x00<img>]")
    assert "/" not in slug and ".." not in slug.replace("...", "") and "\x00" not in slug and "<" not in slug


def test_empty_id_is_refused() -> None:
    with pytest.raises(ValueError, match="empty node id"):
        slug_nodeid("  ")


def test_folders_are_collision_free_across_workers_and_reruns(tmp_path: Path) -> None:
    nodeid = "tests/t.py::test_a"
    first = create_test_folder(tmp_path, nodeid)
    rerun = create_test_folder(tmp_path, nodeid)
    gw0 = create_test_folder(tmp_path, nodeid, worker="gw0")
    gw1 = create_test_folder(tmp_path, nodeid, worker="gw1")
    gw0_rerun = create_test_folder(tmp_path, nodeid, worker="gw0")
    names = [p.name for p in (first, rerun, gw0, gw1, gw0_rerun)]
    assert names == ["tests-t.py-test_a", "tests-t.py-test_a-attempt2", "tests-t.py-test_a@gw0",
                     "tests-t.py-test_a@gw1", "tests-t.py-test_a@gw0-attempt2"]
    assert all(p.is_dir() for p in (first, rerun, gw0, gw1, gw0_rerun))


def test_worker_ids_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="worker id"):
        create_test_folder(tmp_path, "t.py::a", worker="../x")


@pytest.mark.parametrize(("retain", "failed", "kept"), [
    ("on", False, True), ("on", True, True), ("failure", True, True), ("failure", False, False),
    ("off", True, False), ("off", False, False),
])
def test_retention(retain: str, failed: bool, kept: bool) -> None:
    assert should_retain(retain, failed=failed) is kept


def test_retention_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError):
        should_retain("sometimes", failed=True)


def test_discard_removes_the_folder_and_an_empty_root(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    folder = create_test_folder(root, "t.py::a")
    (folder / "journal.jsonl").write_text("{}\n")
    discard_folder(folder, root)
    assert not root.exists()


def test_discard_refuses_paths_outside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with pytest.raises(ValueError, match="not inside the artifacts root"):
        discard_folder(outside, tmp_path / "artifacts")
    assert outside.exists()
