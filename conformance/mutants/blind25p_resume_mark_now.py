"""A port whose resume sets the watermark to now even when it was later (now, not the later of the
two), so a slot fired before a clock step back can fire again: RWQ-SCHED-014."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if not mark or mark < now then redis.call('HSET', fired, name, now) end",
    "redis.call('HSET', fired, name, now)",
)
if __name__ == "__main__":
    serve_reference()
