"""A port whose pause of a paused schedule records the pause again (a new time) and answers 1:
RWQ-SCHED-014."""

from _blind25p import edit, serve_reference

edit(
    "schedule",
    "if exists == 0 or redis.call('HEXISTS', paused, name) == 1 then return 0 end",
    "if exists == 0 then return 0 end",
)
if __name__ == "__main__":
    serve_reference()
