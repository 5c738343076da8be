"""The optima a cache run is measured against (searchers, untrusted; the checker recounts them).

* :mod:`pyverify.optimal.belady` -- Belady's MIN in its bypass form, per cache, with a witness;
* :mod:`pyverify.optimal.forced` -- the forced-admission optimum (every fetched block admitted,
  the running request's blocks kept);
* :mod:`pyverify.optimal.curve` -- the optimum at every capacity in one pass (Mattson's stack
  property of MIN);
* :mod:`pyverify.optimal.compiled` -- numba for their few plain loops, imported when first used.
"""
