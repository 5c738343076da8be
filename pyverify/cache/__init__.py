"""The block caches, one module per eviction policy, below every simulator that drives them.

* :mod:`pyverify.cache.protocol` -- what every cache answers (the one interface: ``prefix_hits``,
  ``start``, ``finish``; ``serve_alone``), which simulate and replay alone drive;
* :mod:`pyverify.cache.names` -- the policies' names, as ``--eviction`` spells them;
* :mod:`pyverify.cache.policies` -- the cache a policy's name stands for;
* :mod:`pyverify.cache.lru` -- chain-order LRU and FIFO (compiled: :mod:`pyverify.cache.lru_kernel`);
* :mod:`pyverify.cache.tree` -- leaf-first LRU and tail-first, which keep the cache a prefix tree
  (compiled: :mod:`pyverify.cache.tree_kernel`);
* :mod:`pyverify.cache.vllm` -- vLLM's block pool, move for move (compiled:
  :mod:`pyverify.cache.vllm_kernel`);
* :mod:`pyverify.cache.sglang` -- SGLang's radix cache, move for move (compiled:
  :mod:`pyverify.cache.sglang_kernel`);
* :mod:`pyverify.cache.prompts` -- a prompt's full blocks, what the engines' caches see;
* :mod:`pyverify.cache.pinning` -- lru, fifo and leaf-lru keeping a running request's blocks
  (a timed replay's GPU caches);
* :mod:`pyverify.cache.unbounded` -- no capacity: nothing is evicted;
* :mod:`pyverify.cache.arrays` -- chains as flat arrays, the kernels' input; the kernels' array
  structures: :mod:`pyverify.cache.array_queue` (a doubly linked queue),
  :mod:`pyverify.cache.array_heap` (a binary heap), :mod:`pyverify.cache.child_table`
  (a hash table of tree edges).

Each policy's plain-Python class is the reference its kernel is tested against. A kernel module
imports numba when it loads, so nothing here imports one: the caller (``simulate``, ``replay``)
imports a kernel only when :func:`pyverify.sim.kernels.use_kernels` says it repays its start-up.
"""
