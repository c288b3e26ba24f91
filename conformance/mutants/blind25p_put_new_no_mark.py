"""A port whose schedule put of a new name writes no watermark (the first slot a scheduler sees
starts the schedule): RWQ-SCHED-013."""

from _blind25p import edit, serve_reference

edit("schedule", "if exists == 0 then redis.call('HSET', fired, name, now) end", "")
if __name__ == "__main__":
    serve_reference()
