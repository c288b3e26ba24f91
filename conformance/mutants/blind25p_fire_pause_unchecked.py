"""A port whose fire does not look at the pause (its scheduler skips paused schedules, so the port
thought the script need not): RWQ-SCHED-009."""

from _blind25p import edit, serve_reference

edit("fire", "if pause then return {now, 'paused', reply_mark, {}} end", "")
if __name__ == "__main__":
    serve_reference()
