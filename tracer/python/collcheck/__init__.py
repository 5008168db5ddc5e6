"""collcheck annotations for Python training loops.

Tells the collcheck tracer where an optimizer update begins, how many valid items this rank
contributed, how its loss was normalized and what the reducer does beyond the operation on the
wire, so that ``collcheck analyze`` can check every gradient reduction against the global item
mean g = (1/N) sum_r n_r mean_r, N = sum_r n_r (docs/annotations.md).

The module calls the C entry points of ``tracer/include/collcheck/annotate.h``, which the preload
library (``libcollcheck_preload.so``) defines. It finds them in the running process
(``ctypes.CDLL(None)``): without the preload library every function is a no-op that costs one
test, raises nothing, writes nothing and reads no tensor (no ``.item()``, so no device sync).

    import collcheck
    for step, batch in enumerate(loader):
        collcheck.window_begin(step)
        n = int(batch.mask.sum())
        collcheck.valid_count(n)
        loss = (per_item_loss * batch.mask).sum() / n
        collcheck.normalization(collcheck.LOCAL_MEAN)
        loss.backward()

It also records where a program's collectives were made: a function decorated with
``collcheck.call_sites`` has every collective it makes recorded as made at the line of Python that
called it (``collcheck.torch.record_call_sites()`` does so for torch.distributed), so that
``collcheck analyze`` names that line in its findings.
"""

import ctypes
import functools
import os
import sys

__all__ = [
    "UNKNOWN", "LOCAL_MEAN", "GLOBAL_MEAN", "SUM", "MULTIPLIER",
    "active", "window_begin", "valid_count", "normalization", "reducer_scale", "call_sites",
    "source_site", "site",
]

# How the local loss was normalized (the values of enum collcheck_normalization).
UNKNOWN = 0
LOCAL_MEAN = 1   # divided by this rank's valid count
GLOBAL_MEAN = 2  # divided by the all-reduced global count
SUM = 3          # not divided
MULTIPLIER = 4   # multiplied by an explicit per-item factor

_NAMES = {
    "unknown": UNKNOWN,
    "local-mean": LOCAL_MEAN,
    "global-mean": GLOBAL_MEAN,
    "sum": SUM,
    "multiplier": MULTIPLIER,
}

# Entry point: (argument types, result type).
_SIGNATURES = {
    "collcheck_window_begin": ([ctypes.c_uint64], None),
    "collcheck_valid_count": ([ctypes.c_double], None),
    "collcheck_normalization": ([ctypes.c_int, ctypes.c_double], None),
    "collcheck_reducer_scale": ([ctypes.c_double], None),
    "collcheck_source_site": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_uint32),
    "collcheck_site_enter": ([ctypes.c_uint32], ctypes.c_int),
    "collcheck_site_leave": ([], None),
}


def _find_entry_points():
    """The preload library's entry points in this process, by name (empty without it)."""
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return {}
    found = {}
    for name, (argtypes, restype) in _SIGNATURES.items():
        try:
            function = getattr(process, name)
        except AttributeError:
            continue
        function.argtypes = argtypes
        function.restype = restype
        found[name] = function
    return found


_entry_points = _find_entry_points()

# Reducer scales declared once for the whole run (collcheck.torch.declare_ddp): a reducer scale
# holds for the window it is declared in, so these are declared again at every window_begin.
_standing_reducer_scales = []


def active():
    """True when the collcheck preload library is loaded and the annotations are recorded."""
    return bool(_entry_points)


def _number(value, what):
    # Tensors and numpy scalars: .item() gives the Python number.
    if hasattr(value, "item"):
        value = value.item()
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"collcheck.{what}: expected a number, not {type(value).__name__}") from None


def window_begin(window):
    """Start of optimizer update `window` (0, 1, 2, ...): later collectives belong to it."""
    window = int(window)
    if window < 0:
        raise ValueError(f"collcheck.window_begin: the window is a non-negative index, not {window}")
    function = _entry_points.get("collcheck_window_begin")
    if function is None:
        return
    function(window)
    scale = _entry_points.get("collcheck_reducer_scale")
    for factor in _standing_reducer_scales:
        scale(factor)


def valid_count(count):
    """Adds `count` valid items (examples, unmasked tokens or a sum of sample weights) of this rank
    to the current window; call it once per micro-batch, the tracer adds them up."""
    function = _entry_points.get("collcheck_valid_count")
    if function is None:
        return  # before _number: a tensor's .item() would wait for its device
    function(_number(count, "valid_count"))


def normalization(how, multiplier=0.0):
    """How this rank's loss of the current window was normalized before backward: LOCAL_MEAN,
    GLOBAL_MEAN, SUM, or MULTIPLIER with the effective per-item factor (names such as
    "local-mean" work too)."""
    if isinstance(how, str):
        if how not in _NAMES:
            raise ValueError(f"collcheck.normalization: {how!r} is not one of {sorted(_NAMES)}")
        how = _NAMES[how]
    how = int(how)
    if how not in _NAMES.values():
        raise ValueError(f"collcheck.normalization: {how} is not one of {sorted(_NAMES.values())}")
    function = _entry_points.get("collcheck_normalization")
    if function is not None:
        function(how, _number(multiplier, "normalization"))


def reducer_scale(factor, every_window=False):
    """What the reducer does beyond the operation on the wire, e.g. 1/P for PyTorch DDP, which
    divides each bucket by the world size before a SUM all-reduce. With `every_window` the
    declaration is repeated at every later window_begin."""
    function = _entry_points.get("collcheck_reducer_scale")
    if function is None:
        return
    factor = _number(factor, "reducer_scale")
    if every_window:
        _standing_reducer_scales.append(factor)
    function(factor)


# Site indexes by (code object, line) or by name: the tracer writes a site once per process, and
# a forked child starts a trace of its own, with its own table.
_site_indexes = {}
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_site_indexes.clear)


def source_site(file, line, function):
    """The tracer's index of the site `file`:`line` in `function` (0 without the tracer): written
    to the trace once per process, then usable with `site`."""
    line = int(line)
    if line < 0:
        raise ValueError(f"collcheck.source_site: the line is a non-negative number, not {line}")
    key = (file, line, function)
    index = _site_indexes.get(key)
    if index is None:
        register = _entry_points.get("collcheck_source_site")
        if register is None:
            return 0
        index = _site_indexes[key] = register(os.fsencode(file), function.encode(), line)
    return index


class site:
    """A context in which this thread's collectives are recorded as made at `file`:`line` in
    `function` (an index from `source_site` works too). The outermost one holds: a site entered
    inside another is ignored. One `with` at a time per object: make one per use."""

    __slots__ = ("_index", "_entered")

    def __init__(self, file, line=0, function=""):
        self._index = file if isinstance(file, int) else source_site(file, line, function)
        self._entered = False

    def __enter__(self):
        enter = _entry_points.get("collcheck_site_enter")
        self._entered = bool(enter and self._index and enter(self._index))
        return self

    def __exit__(self, *exc):
        if self._entered:
            _entry_points["collcheck_site_leave"]()
            self._entered = False
        return False


def call_sites(function):
    """Decorator: every collective `function` makes (through MPI or NCCL, at any depth) is recorded
    as made at the line of Python that called it, so that a finding names that line rather than a
    line inside a library. Without the tracer it returns `function` itself: no cost at all.

    Costs about a microsecond per call with the tracer (a frame look-up and two calls into it)."""
    enter = _entry_points.get("collcheck_site_enter")
    leave = _entry_points.get("collcheck_site_leave")
    register = _entry_points.get("collcheck_source_site")
    if enter is None or leave is None or register is None:
        return function
    if getattr(function, "__collcheck_call_sites__", False):
        return function
    getframe = sys._getframe

    @functools.wraps(function)
    def recorded_at_caller(*args, **kwargs):
        frame = getframe(1)
        code = frame.f_code
        line = frame.f_lineno or 0  # None where the interpreter knows no line
        key = (code, line)
        index = _site_indexes.get(key)
        if index is None:
            index = _site_indexes[key] = register(os.fsencode(code.co_filename),
                                                  code.co_name.encode(), line)
        if not enter(index):
            return function(*args, **kwargs)
        try:
            return function(*args, **kwargs)
        finally:
            leave()

    recorded_at_caller.__collcheck_call_sites__ = True
    return recorded_at_caller
