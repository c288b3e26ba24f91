"""A port whose resume of a schedule that is not paused still moves its watermark to now (and
answers 0), dropping the slots still within grace: RWQ-SCHED-014."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if redis.call('HDEL', paused, name) == 0 then return 0 end",
    "local was_paused = redis.call('HDEL', paused, name)",
)
edit(
    "schedule",
    "  if not mark or mark < now then redis.call('HSET', fired, name, now) end\nend\nreturn 1",
    "  if not mark or mark < now then redis.call('HSET', fired, name, now) end\nend\nreturn was_paused",
)
if __name__ == "__main__":
    serve_reference()
