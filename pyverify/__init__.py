"""pyverify: check claims about prefix (KV) cache reuse in an inference fleet."""

__version__ = "0.1.0"
