"""Simulation (searchers, untrusted): cache runs, routing, counting and curves.

* :mod:`pyverify.sim.simulate`: demand-cache runs, pooled or per host, with a witness.
* :mod:`pyverify.sim.routing`: routing policies that place requests on hosts.
* :mod:`pyverify.sim.counting`: vectorised uncapacitated counts.
* :mod:`pyverify.sim.mrc`: exact one-pass LRU miss-ratio curves.
* :mod:`pyverify.sim.sweep`: pooled against per-host over fleet sizes.

Nothing here is trusted: every certified number is re-checked by :mod:`pyverify.trusted`.
"""
