"""Warnings that point at the user's line.

A warning issued deep inside a fit names, with a fixed ``stacklevel``, a line of sparsetab or of
scikit-learn (the ``_fit_context`` wrapper, a Pipeline, a search), which tells the user nothing.
:func:`warn` instead counts the frames up to the first one of the user's code: outside sparsetab,
scikit-learn and joblib (as pandas does for its own warnings) and outside the standard library
(``contextlib``, ``functools``, the thread and process machinery). Where the stack holds no user
frame at all, as in a worker process or thread of a parallel search, the warning names the first
frame outside sparsetab instead: the scikit-learn or joblib line that called ``fit``.

A consequence worth knowing: ``warnings.filterwarnings(..., module="sparsetab")`` does not match
these warnings, since they are attributed to the caller's module; filter by category or message.
"""

import os
import sys
import sysconfig
import warnings

__all__ = ["warn", "user_stack_level"]

# Frames of sparsetab and of these packages are library frames: a warning is attributed to the first
# frame outside them.
_PACKAGE_DIRECTORY = os.path.dirname(os.path.abspath(__file__)) + os.sep
_LIBRARY_PACKAGES = ("sklearn", "joblib")


def _library_directories():
    directories = [_PACKAGE_DIRECTORY]
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            directories.append(os.path.dirname(module.__file__) + os.sep)
    return tuple(directories)


_STANDARD_LIBRARY_DIRECTORIES = tuple(
    {os.path.normpath(sysconfig.get_paths()[name]) + os.sep for name in ("stdlib", "platstdlib")}
)


def _is_standard_library(filename):
    if filename.startswith("<frozen "):  # runpy, importlib: frozen standard-library modules
        return True
    # site-packages may lie inside the standard library's folder: third-party code there is not stdlib.
    return filename.startswith(_STANDARD_LIBRARY_DIRECTORIES) and "-packages" + os.sep not in filename


def user_stack_level():
    """The ``stacklevel`` that makes a warning issued by the caller name the user's line.

    Returns
    -------
    int
        ``stacklevel`` for :func:`warnings.warn` called from the function that calls this one:
        1 names that function's line, 2 its caller's, and so on up to the first frame that is
        neither in sparsetab, scikit-learn or joblib nor in the standard library. Without such
        a frame (a worker of a parallel search), the first frame outside sparsetab.
    """
    directories = _library_directories()
    frame = sys._getframe(1)  # the function that will call warnings.warn
    level = 1
    first_outside_sparsetab = None
    while frame is not None:
        filename = frame.f_code.co_filename
        in_library = filename.startswith(directories)
        if not in_library and not _is_standard_library(filename):
            return level
        if first_outside_sparsetab is None and not filename.startswith(_PACKAGE_DIRECTORY):
            first_outside_sparsetab = level
        frame = frame.f_back
        level += 1
    return first_outside_sparsetab if first_outside_sparsetab is not None else 1


def warn(message, category=UserWarning):
    """Issue ``message`` as a warning attributed to the first frame outside the libraries.

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        The warning class.
    """
    # user_stack_level counts from this function's frame; warnings.warn then counts from here too.
    warnings.warn(message, category, stacklevel=user_stack_level())
