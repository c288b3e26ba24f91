"""A port whose fire checks every_ms slots against the grid k*every_ms, forgetting offset_ms:
RWQ-SCHED-003."""

from _blind25p import edit, serve_reference

edit("fire", "if (slot - offset) % d.every_ms ~= 0 then", "if slot % d.every_ms ~= 0 then")
if __name__ == "__main__":
    serve_reference()
