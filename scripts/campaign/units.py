"""Time quantities with units, as the rest of llamp writes them ("10us", "0.5ms", "250ns")."""
import re

_FACTORS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$")


class UnitError(ValueError):
    pass


def parse_time_ns(text, what, default_unit="us"):
    """'10us' -> 10000.0; a bare number is read in default_unit (ΔL lists are in µs)."""
    m = _PATTERN.match(str(text))
    if not m:
        raise UnitError(f"{what}: '{text}' is not a time such as 10us, 500ns or 0.1ms")
    unit = m.group(2) or default_unit
    if unit is None:
        raise UnitError(f"{what}: '{text}' needs a unit (ns, us, ms, s)")
    return float(m.group(1)) * _FACTORS[unit]


def parse_time_list_ns(text, what):
    """'0,10,20us' -> [0, 10000, 20000]: comma-separated, each with its own unit or µs."""
    items = [t for t in str(text).split(",") if t.strip()]
    if not items:
        raise UnitError(f"{what}: empty list")
    values = [parse_time_ns(t, what) for t in items]
    if len(set(values)) != len(values):
        raise UnitError(f"{what}: '{text}' lists a value twice")
    return sorted(values)


def env_time(ns):
    """ΔL as the injector reads it from LLAMP_DELTA_L: whole nanoseconds with a unit."""
    return "0" if ns == 0 else f"{int(round(ns))}ns"


def fmt_us(ns, digits=1):
    return f"{ns / 1e3:.{digits}f} µs"
