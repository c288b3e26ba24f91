"""The RWQ/1 conformance suite: cases, runner, adapters and reports."""
