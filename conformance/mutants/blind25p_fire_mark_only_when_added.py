"""A port whose fire moves the watermark only when it added an item, so a slot whose id already
exists leaves the watermark behind: RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit(
    "fire",
    "redis.call('HSET', fired, name, new_mark)",
    "if #added > 0 then redis.call('HSET', fired, name, new_mark) end",
)
if __name__ == "__main__":
    serve_reference()
