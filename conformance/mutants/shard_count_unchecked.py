"""Mutant: the shard count is not checked by the client, which leaves it to the ``shards``
script: a count over 1024 is refused, but only after a round trip."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import validation
from rwq.protocol.sharding import ShardLayout

_integer = validation.integer


def _lenient(value: object, name: str, low: int, high: int) -> int:
    return _integer(value, name, low, 1 << 20) if name == "shards" else _integer(value, name, low, high)


_post_init = ShardLayout.__post_init__


def _checked(self: ShardLayout) -> None:
    validation.integer = _lenient  # type: ignore[assignment]
    try:
        _post_init(self)
    finally:
        validation.integer = _integer


if __name__ == "__main__":
    ShardLayout.__post_init__ = _checked  # type: ignore[method-assign]
    reference_adapter.main()
