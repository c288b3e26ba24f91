"""A port whose schedule put of a new name sets its watermark to 0 (never fired), not the server's
now, so the first tick fires slots from before the put: RWQ-SCHED-013."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if exists == 0 then redis.call('HSET', fired, name, now) end",
    "if exists == 0 then redis.call('HSET', fired, name, 0) end",
)

if __name__ == "__main__":
    serve_reference()
