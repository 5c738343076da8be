#!/usr/bin/env python3
"""Write lean/PrefixPool/Generated.lean from the Python mirrors (see pyverify/lean/generated.py).

Usage: python scripts/gen_lean_examples.py [--check]
  --check   do not write; exit 1 if the committed file is not what the generator writes
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyverify.lean.generated import OUTPUT, ROOT, SEED, main, render  # noqa: E402,F401 (re-exported for tests)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
