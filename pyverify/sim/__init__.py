"""Simulation (searchers, untrusted): cache runs, routing, counting and curves.

* :mod:`pyverify.sim.simulate`: demand-cache runs, pooled or per host, with a witness.
* :mod:`pyverify.sim.routing`: routing policies that place requests on hosts.
* :mod:`pyverify.sim.counting`: vectorised uncapacitated counts.
* :mod:`pyverify.sim.mrc`: exact one-pass LRU miss-ratio curves.
* :mod:`pyverify.sim.sweep`: pooled against per-host over fleet sizes.
* :mod:`pyverify.sim.tokens`, :mod:`pyverify.sim.window`, :mod:`pyverify.sim.accounting`:
  token weights, the measurement window, block and token hit counts of a run.
* :mod:`pyverify.sim.engine_curves`: one-pass curve of vLLM's order; token-weighted curves.
* :mod:`pyverify.sim.budgets`: hit rates at KV memory budgets in GiB.

Nothing here is trusted: every certified number is re-checked by :mod:`pyverify.trusted`.
"""
