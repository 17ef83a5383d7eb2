"""Atomic file writes: a reader never sees a half-written model or program file."""

import contextlib
import os
import tempfile

__all__ = ["atomic_write"]


@contextlib.contextmanager
def atomic_write(path, suffix):
    """Yield a temporary path next to ``path``; on success it replaces ``path`` in one step.

    Readers never see a half-written file, and a failed write leaves an existing file as it was. A
    replaced file keeps its permissions; a symbolic link is followed.

    Parameters
    ----------
    path : str or os.PathLike
        The final path.
    suffix : str
        Suffix of the temporary file (some writers insist on an extension).

    Yields
    ------
    str
        The temporary path to write.

    Raises
    ------
    FileNotFoundError
        If the folder of ``path`` does not exist; the message names ``path`` as given.
    """
    # Through a symbolic link, write the file it points to (as open() would), not a file replacing the link.
    given = os.fspath(path)
    path = os.path.realpath(given)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):  # else mkstemp's error would name the temporary file, not the user's path
        raise FileNotFoundError(
            f"Cannot write {given!r}: the folder {os.path.dirname(given) or directory!r} does not exist. Create it "
            "first (os.makedirs)."
        )
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".sparsetab-", suffix=suffix)
    os.close(handle)
    try:
        yield temporary
        # mkstemp creates the file private (0600); give it the permissions open() would: those of the
        # file it replaces, else the default for a new file.
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _umask():
    # Read without os.umask(), which would change the process-wide mask even for a moment.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022
