"""A port whose fire takes any slot of an every_ms schedule, on its grid or not: RWQ-SCHED-003."""

from _blind25p import edit, serve_reference

edit("fire", "if (slot - offset) % d.every_ms ~= 0 then", "if false then")
if __name__ == "__main__":
    serve_reference()
