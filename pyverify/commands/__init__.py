"""Subcommands of the pyverify CLI, one module per family."""
