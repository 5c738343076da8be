"""Model and inputs: what a request, a trace and an instance are, and how files become them.

* :mod:`pyverify.inputs.model`: the instance type, its JSON schema, canonical hash and prefix closure.
* :mod:`pyverify.inputs.mooncake`: the streaming Mooncake JSONL importer.
* :mod:`pyverify.inputs.load`: one entry point, :func:`~pyverify.inputs.load.load_input`, for every command.
"""
