"""Static routings on a columnar trace, vectorised, host for host the same as :mod:`pyverify.sim.routing`.

Each function returns one host per request (int64). The rules are those of
:mod:`pyverify.sim.routing` (its docstring is the definition); what changes is
only how they are computed:

``round-robin``
    ``arange(n) % F``.
``random``
    ``random.Random(seed).randrange(F)`` draws, for every request in turn,
    ``getrandbits(k)`` (``k = F.bit_length()``: the top ``k`` bits of one
    32-bit Mersenne Twister output) until a value below ``F`` comes up
    (CPython's ``_randbelow_with_getrandbits``). numpy's legacy
    ``RandomState`` runs the same Mersenne Twister; given CPython's state
    (:func:`mersenne_state`), its raw 32-bit outputs are CPython's, and the
    accepted draws, in order, are the routing. Tested against the Python policy.
``route-key`` / ``prefix-hash``
    First 8 bytes of SHA-256 (big-endian) of the key or of the first block id
    in decimal, mod F: one hashlib call per *request*, none per block.
``given`` / ``fold``
    The trace's own ``host`` column, unchanged or mod F.

``prefix-affinity`` depends on every host's cache state as requests arrive,
so it is sequential over the whole fleet: it runs on one machine through
:mod:`pyverify.sim.routing`, and the engines refuse it with a sentence saying so.
"""

from __future__ import annotations

import hashlib
import random as _random

import numpy as np

from pyverify.errors import UserError
from pyverify.inputs.columnar import ColumnarTrace

#: Policies the engines can compute without simulating caches.
STATIC_POLICIES = ("round-robin", "random", "route-key", "prefix-hash", "given", "fold")

ONE_MACHINE = (
    "routing policy 'prefix-affinity' routes each request by what every host's cache holds at that moment, "
    "so it is sequential over the whole fleet and runs on one machine only: use --backend numpy"
)


def mersenne_state(seed: int) -> np.random.RandomState:
    """A numpy Mersenne Twister in exactly the state of ``random.Random(seed)``.

    The state is copied from CPython itself (``getstate``), so however
    CPython turns a seed into a key, the streams agree.
    """
    words = _random.Random(seed).getstate()[1]
    state = np.random.RandomState()
    state.set_state(("MT19937", np.array(words[:624], dtype=np.uint32), words[624]))
    return state


def random_hosts(n_requests: int, fleet_size: int, seed: int = 0) -> np.ndarray:
    """``[random.Random(seed).randrange(fleet_size) for each request]``, vectorised."""
    if fleet_size >= 2**32:
        raise UserError(f"fleet size {fleet_size} is too large for the vectorised random routing")
    state = mersenne_state(seed)
    bits = int(fleet_size).bit_length()
    hosts = np.empty(n_requests, dtype=np.int64)
    filled = 0
    while filled < n_requests:
        want = n_requests - filled
        # Each draw is accepted with probability > 1/2; draw a little more than twice the rest.
        raw = state.randint(
            0, 2**32, size=2 * want + 64, dtype=np.uint32
        )  # full range: raw outputs
        candidates = (raw >> np.uint32(32 - bits)).astype(np.int64)
        accepted = candidates[candidates < fleet_size]
        take = min(want, accepted.size)
        hosts[filled : filled + take] = accepted[:take]
        filled += take
    return hosts


def hash_hosts(keys, fleet_size: int) -> np.ndarray:
    """``stable_hash(key) % fleet_size`` for each key (see :func:`pyverify.sim.routing.stable_hash`)."""
    sha = hashlib.sha256
    return np.fromiter(
        (int.from_bytes(sha(key.encode("utf-8")).digest()[:8], "big") % fleet_size for key in keys),
        dtype=np.int64,
        count=len(keys),
    )


def static_hosts(trace: ColumnarTrace, fleet_size: int, policy: str, seed: int = 0) -> np.ndarray:
    """One host per request of ``trace`` under a static ``policy`` (rules: module docstring)."""
    if fleet_size < 1:
        raise UserError(f"fleet size must be at least 1, got {fleet_size}")
    n = trace.n_requests
    if policy == "round-robin":
        return np.arange(n, dtype=np.int64) % fleet_size
    if policy == "random":
        return random_hosts(n, fleet_size, seed)
    if policy == "prefix-hash":
        firsts = trace.ids[trace.offsets[:-1]]
        return hash_hosts([str(block) for block in firsts.tolist()], fleet_size)
    if policy == "route-key":
        keys = trace.route_keys
        missing = (
            0 if keys is None else next((i for i, key in enumerate(keys) if key is None), None)
        )
        if missing is not None:
            raise UserError(
                f"routing policy 'route-key' needs a route_key on every request; requests[{missing}] has none"
                " (traces carry none: try prefix-hash)"
            )
        return hash_hosts(keys, fleet_size)
    if policy in ("given", "fold"):
        if trace.routing is None:
            raise UserError(
                f"routing policy {policy!r} needs an instance that gives a host for every request; this one gives none"
            )
        own = int(trace.routing.max()) + 1
        if policy == "given":
            if fleet_size != own:
                raise UserError(
                    f"routing policy 'given' works only at the instance's own fleet size {own}, not {fleet_size}"
                )
            return trace.routing
        if not 1 <= fleet_size <= own:
            raise UserError(
                f"routing policy 'fold' shrinks the instance's fleet: fleet size {fleet_size} must be between 1 and {own}"
            )
        return trace.routing % fleet_size
    if policy == "prefix-affinity":
        raise UserError(ONE_MACHINE)
    raise UserError(
        f"unknown routing policy {policy!r}; choose one of: {', '.join(STATIC_POLICIES)}"
    )


__all__ = ["ONE_MACHINE", "STATIC_POLICIES", "hash_hosts", "random_hosts", "static_hosts"]
