"""A port whose resume only deletes the pause and leaves the watermark, so slots of the pause that
are still within grace fire: RWQ-SCHED-014."""

from _blind25p import edit, serve_reference

edit("schedule", "if not mark or mark < now then redis.call('HSET', fired, name, now) end", "")
if __name__ == "__main__":
    serve_reference()
