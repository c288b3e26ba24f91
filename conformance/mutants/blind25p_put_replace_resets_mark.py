"""A port whose schedule put sets the watermark to now on every put, a replaced definition too:
RWQ-SCHED-013."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if exists == 0 then redis.call('HSET', fired, name, now) end",
    "redis.call('HSET', fired, name, now)",
)
if __name__ == "__main__":
    serve_reference()
