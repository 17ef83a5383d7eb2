"""Warnings that point at the user's line.

A warning issued deep inside a fit names, with a fixed ``stacklevel``, a line of sparsetab or of
scikit-learn (the ``_fit_context`` wrapper, a Pipeline, a search), which tells the user nothing.
:func:`warn` instead counts the frames up to the first one outside sparsetab, scikit-learn and
joblib, as pandas does for its own warnings, so the warning names the line that called the library.
"""

import os
import sys
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


def user_stack_level():
    """The ``stacklevel`` that makes a warning issued by the caller name the user's line.

    Returns
    -------
    int
        ``stacklevel`` for :func:`warnings.warn` called from the function that calls this one:
        1 names that function's line, 2 its caller's, and so on up to the first frame whose file
        lies outside sparsetab, scikit-learn and joblib.
    """
    directories = _library_directories()
    frame = sys._getframe(1)  # the function that will call warnings.warn
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(directories):
        frame = frame.f_back
        level += 1
    return level


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
