"""Shared helper of the Python drivers: prints one deterministic line per step.

A step's line is `name: value` or `name: raises ClassName: message`; values
are printed with repr(), bytes decoded, so a transcript holds no tokens and
no timings, and the one from `redlock-sim node` can be compared line for line
with the one from `redis-server`.
"""
import re
import sys

# Addresses differ from run to run (free ports): an error naming one is printed
# with ADDR in its place.
_ADDR = re.compile(r"(127\.0\.0\.1|localhost)[:,] ?\d+")


def show(value):
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "replace"))
    return repr(value)


def step(name, fn):
    """Runs fn(), prints its result or the exception it raised; returns the result."""
    try:
        value = fn()
    except Exception as e:  # the library's own errors are part of the transcript
        msg = _ADDR.sub("ADDR", str(e))
        print(f"{name}: raises {type(e).__name__}: {msg}", flush=True)
        return None
    print(f"{name}: {show(value)}", flush=True)
    return value


def note(line):
    print(line, flush=True)


def addrs(argv):
    """host:port arguments as (host, port) pairs."""
    out = []
    for a in argv:
        host, _, port = a.rpartition(":")
        out.append((host, int(port)))
    return out


def usage(text):
    print(text, file=sys.stderr)
    sys.exit(2)
