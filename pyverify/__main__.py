"""`python -m pyverify`: the same as the `pyverify` command."""

from pyverify.launch import entry

entry()
