"""A port whose pause records a pause for a name with no schedule, so a schedule put later under
that name is born paused: RWQ-SCHED-014 and RWQ-SCHED-015."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if exists == 0 or redis.call('HEXISTS', paused, name) == 1 then return 0 end",
    "if redis.call('HEXISTS', paused, name) == 1 then return 0 end",
)
if __name__ == "__main__":
    serve_reference()
