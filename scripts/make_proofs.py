#!/usr/bin/env python3
"""Regenerate every certificate in proofs/ (run from anywhere; paths are repo-relative).

Each entry is one `pyverify certify` run; each certificate is written only
after the trusted checker accepted it (see pyverify/certify/certificate.py).
CI (tests/test_check_proofs.py) re-verifies every file in proofs/ against the
instance named in its "instance.path".

Usage: python scripts/make_proofs.py [--time-limit S]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyverify.cli import main as pyverify  # noqa: E402

#: (instance, model, capacity, certificate[, admission]): the committed certificates.
PROOFS = [
    ("instances/lab-512x32x16.json", "pooled", None, "proofs/lab-512x32x16.pooled.json"),
    ("instances/lab-512x32x16.json", "per-host", None, "proofs/lab-512x32x16.per-host-16.json"),
    ("instances/greedy-gap-30.json", "pooled", 4, "proofs/greedy-gap-30.pooled-c4.json"),
    # Forced admission (the optimum of a cache that admits what it fetches, as vLLM and SGLang do)
    # on the Mooncake synthetic trace at 256 blocks of 512 tokens: the README's engine comparison.
    (
        "instances/mooncake-synthetic.json",
        "pooled",
        256,
        "proofs/mooncake-synthetic.forced-c256.json",
        "forced",
    ),
]


def main(argv: list[str]) -> int:
    os.chdir(ROOT)  # so certificates record repo-relative instance paths
    extra = argv[1:]
    for instance, model, capacity, output, *admission in PROOFS:
        args = ["certify", instance, "--model", model, "-o", output, *extra]
        if capacity is not None:
            args += ["--capacity", str(capacity)]
        if admission:
            args += ["--admission", admission[0]]
        print(f"$ pyverify {' '.join(args)}", flush=True)
        status = pyverify(args)
        if status != 0:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
