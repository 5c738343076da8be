"""Model and inputs: what a request, a trace and an instance are, and how files become them.

* :mod:`pyverify.inputs.model`: the instance type, its JSON schema, canonical hash and prefix closure.
* :mod:`pyverify.inputs.load`: one entry point, :func:`~pyverify.inputs.load.load_input`, for every
  command, and the registry of formats (told apart by content: :mod:`pyverify.inputs.detect`).
* :mod:`pyverify.inputs.stream`: files, standard input (``-``) and gzip; :mod:`pyverify.inputs.jsonread`:
  the strict, bounded JSON reader.
* readers: :mod:`pyverify.inputs.mooncake` (Mooncake JSONL), :mod:`pyverify.inputs.tokens_import`
  (token-id logs hashed as vLLM does), :mod:`pyverify.inputs.chat_import` (OpenAI chat JSONL), sharing
  :mod:`pyverify.inputs.records`; :mod:`pyverify.inputs.reblock` (coarser blocks from ids).
* :mod:`pyverify.inputs.columnar`: a trace as flat numpy arrays for large inputs, with its fast readers
  (Mooncake JSONL, Parquet, CSV) and the Parquet writer; one module per job.
"""
