"""Shared measuring tools of the benchmark scripts: peak memory, the machine description and the printed report."""

import contextlib
import ctypes
import gc
import os
import platform
import shlex
import sys
import threading


def _malloc_trim():
    """``malloc_trim(0)`` of glibc where available: hand freed heap memory back to the OS."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class PeakRSS:
    """Context manager: peak resident set size of this process above its value on entry, in MiB.

    A daemon thread samples ``psutil.Process().memory_info().rss`` every ``interval`` seconds; ``gc.collect()``
    and glibc's ``malloc_trim(0)`` run before the baseline is read, so that memory freed by earlier fits is
    returned to the OS rather than silently reused.

    Parameters
    ----------
    interval : float, default=0.005
        Seconds between samples.
    """

    def __init__(self, interval=0.005):
        import psutil  # the bench extra; imported here so that cpu_model() works without it

        self.interval = interval
        self.process = psutil.Process()
        self.increase_mib = None

    def _sample(self):
        while not self._stop.wait(self.interval):
            self._peak = max(self._peak, self.process.memory_info().rss)

    def __enter__(self):
        gc.collect()
        _malloc_trim()
        self._stop = threading.Event()
        self._base = self._peak = self.process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()
        self._peak = max(self._peak, self.process.memory_info().rss)
        self.increase_mib = (self._peak - self._base) / 2**20
        return False


def cpu_model():
    """Return the CPU model name from /proc/cpuinfo, else :func:`platform.processor`.

    Returns
    -------
    str
    """
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def command_line():
    """Return the command line of this run as it was typed, for the result files.

    A script run as a module (``python -m benchmarks.compare ...``, the documented form) has the path of its file in
    ``sys.argv[0]``; the module's name is what was typed and what reruns it.

    Returns
    -------
    str
    """
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    program = ["-m", spec.name] if spec is not None and spec.name.startswith("benchmarks.") else sys.argv[:1]
    return shlex.join(["python", *program, *sys.argv[1:]])


def machine_header(extra_versions=()):
    """Return a one-line Markdown description of the machine, the versions and the command.

    Parameters
    ----------
    extra_versions : iterable of (str, str)
        More ``(package, version)`` pairs to list after python, torch and scikit-learn.

    Returns
    -------
    str
    """
    import sklearn
    import torch

    import sparsetab

    versions = [
        ("python", platform.python_version()),
        ("sparsetab", sparsetab.__version__),
        ("torch", torch.__version__),
        ("scikit-learn", sklearn.__version__),
        *extra_versions,
    ]
    listed = ", ".join(f"{name} {version}" for name, version in versions)
    command = command_line()
    return f"{cpu_model()}, {os.cpu_count()} cores; {listed}; torch threads {torch.get_num_threads()}. `{command}`"


def publish(lines, output=None):
    """Print a Markdown report given as its lines and, when ``output`` names a file, write it there too.

    Parameters
    ----------
    lines : list of str
        The report's lines, without line ends.
    output : str or os.PathLike or None
        The file to write (replaced); None: print only.

    Returns
    -------
    str
        The report, ending with a newline.
    """
    text = "\n".join(lines) + "\n"
    print(text)
    if output:
        with open(output, "w") as handle:
            handle.write(text)
    return text
