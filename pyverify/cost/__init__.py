"""Cost: what a hit is worth (transfer against recompute) and the reuse report.

* :mod:`pyverify.cost.estimate`: the time model (tokens local, fetched, recomputed; time saved and spent;
  the break-even pool bandwidth) and what it leaves out.
* :mod:`pyverify.cost.params`: the model's parameters, the source of every default, ``--param`` and ``--sweep``.
* :mod:`pyverify.cost.summary`: percentiles of the estimate, the verdict, and how a sweep changes it.
* :mod:`pyverify.cost.reuse`: the reuse report (how much repeats, how much per-host caches see).
"""
