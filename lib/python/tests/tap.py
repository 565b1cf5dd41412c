# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Python tests share: the skip exception, TAP-style diagnostics
and a check that fails the test with a message."""


class Skip(Exception):
    """The test cannot run here (raised with the reason)."""


def log(fmt, *a):
    """A TAP diagnostic line: '# ' + fmt % a."""
    print("# " + (fmt % a if a else fmt), flush=True)


def check(cond, fmt, *a):
    """Fail the test with fmt % a unless cond."""
    if not cond:
        raise AssertionError(fmt % a if a else fmt)
