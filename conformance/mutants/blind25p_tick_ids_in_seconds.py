"""A port whose scheduler reports the ids it fired with the slot in seconds (name@<slot/1000>),
though fire added name@<slot_ms>: RWQ-SCHED-002."""

from _blind25p import patch, serve_reference
from rwq.protocol import periodic

patch(periodic, "item_id", lambda name, slot_ms: f"{name}@{slot_ms // 1000}")

if __name__ == "__main__":
    serve_reference()
