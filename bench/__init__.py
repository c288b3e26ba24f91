"""rwq's benchmark: rwq against raw redis-py, Redis Streams and queue libraries, on one Redis.

Run ``python -m bench`` from the repository root (``--quick`` for a smoke run). It is a benchmark,
not a test: every target is a ratio measured within one run, and nothing here runs in ``make test``.
"""
