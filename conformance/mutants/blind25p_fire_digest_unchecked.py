"""A port whose fire never compares the call's digest with the stored definition, so slots computed
from a replaced definition still fire: RWQ-SCHED-009."""

from _blind25p import edit, serve_reference

edit("fire", "if redis.sha1hex(definition) ~= digest then", "if false then")
if __name__ == "__main__":
    serve_reference()
