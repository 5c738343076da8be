"""`python -m pyverify`: the same as the `pyverify` command."""

from pyverify.cli import entry

entry()
