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
"""

import ctypes

__all__ = [
    "UNKNOWN", "LOCAL_MEAN", "GLOBAL_MEAN", "SUM", "MULTIPLIER",
    "active", "window_begin", "valid_count", "normalization", "reducer_scale",
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

_SIGNATURES = {
    "collcheck_window_begin": [ctypes.c_uint64],
    "collcheck_valid_count": [ctypes.c_double],
    "collcheck_normalization": [ctypes.c_int, ctypes.c_double],
    "collcheck_reducer_scale": [ctypes.c_double],
}


def _find_entry_points():
    """The preload library's entry points in this process, by name (empty without it)."""
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return {}
    found = {}
    for name, argtypes in _SIGNATURES.items():
        try:
            function = getattr(process, name)
        except AttributeError:
            continue
        function.argtypes = argtypes
        function.restype = None
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
