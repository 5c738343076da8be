"""A fleet in time: requests arrive at their timestamps, queue on hosts, and read a GPU and a pool tier.

``pyverify replay`` (:mod:`pyverify.commands.replay`) drives it:

* :mod:`pyverify.fleet.service` -- the service models (an engine's batched steps, or independent streams) and their defaults;
* :mod:`pyverify.fleet.tiers` -- a host's GPU cache (simulate's policies, with blocks pinned while they run) and the pool;
* :mod:`pyverify.fleet.routers` -- the routers, which see cache state and load at arrival;
* :mod:`pyverify.fleet.replay` -- the event loop (and :mod:`pyverify.fleet.compiled_replay`, its compiled twin,
  which runs the numba kernel :mod:`pyverify.fleet.kernel`);
* :mod:`pyverify.fleet.run` -- what a run is asked (its settings) and records, which both loops fill;
* :mod:`pyverify.fleet.trace_views` -- the forms of the one trace the loops read, made once per trace;
* :mod:`pyverify.fleet.report` -- percentiles and the bounds printed beside every answer.
"""

#: ``replay(backend=...)`` and ``pyverify replay --backend``: the compiled run when the configuration allows it (auto),
#: the Python event loop, or the compiled run. Here, not in the event loop's module, so the CLI starts without it.
REPLAY_ENGINES = ("auto", "python", "compiled")
