"""Atomic writes (sparsetab._persistence.files)."""

import os
import stat

import pytest

from sparsetab._persistence.files import atomic_write


def _write(path, text):
    with open(path, "w") as file:
        file.write(text)


def test_the_file_appears_complete_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "model.bin"
    with atomic_write(target, ".tmp") as temporary:
        assert os.path.dirname(temporary) == str(tmp_path) and temporary.endswith(".tmp")
        _write(temporary, "new")
        assert not target.exists()  # nothing visible before the block ends
    assert target.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["model.bin"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "model.bin"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_write(target, ".tmp") as temporary:
            _write(temporary, "half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["model.bin"]


def test_permissions_of_a_replaced_file_are_kept_and_new_files_follow_the_umask(tmp_path):
    target = tmp_path / "model.bin"
    target.write_text("old")
    os.chmod(target, 0o640)
    with atomic_write(target, ".tmp") as temporary:
        _write(temporary, "new")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    fresh = tmp_path / "fresh.bin"
    with atomic_write(fresh, ".tmp") as temporary:
        _write(temporary, "x")
    umask = os.umask(0o022)
    os.umask(umask)  # read back at once: the test process only
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o666 & ~umask


def test_a_symbolic_link_is_followed(tmp_path):
    real = tmp_path / "real.bin"
    real.write_text("old")
    link = tmp_path / "link.bin"
    link.symlink_to(real)
    with atomic_write(link, ".tmp") as temporary:
        _write(temporary, "new")
    assert link.is_symlink() and real.read_text() == "new"
