"""The sans-IO core of RWQ/1: keys, validation, scripts, commands and operation plans.

Nothing here performs I/O. Operations are generators ("plans") that yield commands and
receive their replies; the sync and asyncio shells run the same plans.
"""
