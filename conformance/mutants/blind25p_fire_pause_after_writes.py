"""A port whose fire looks at the pause only after its writes, so a paused schedule's slots are
pushed and its watermark moved before the call answers paused: RWQ-SCHED-009."""

from _blind25p import edit, serve_reference

edit("fire", "if pause then return {now, 'paused', reply_mark, {}} end", "")
edit(
    "fire",
    "if types[flag] then stats_count(prefix, 'added', #added) end",
    "if types[flag] then stats_count(prefix, 'added', #added) end\n"
    "if pause then return {now, 'paused', reply_mark, {}} end",
)

if __name__ == "__main__":
    serve_reference()
