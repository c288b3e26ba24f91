"""A port whose fire adds items without counting them in the queue's statistics, as add would:
RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "if types[flag] then stats_count(prefix, 'added', #added) end", "")

if __name__ == "__main__":
    serve_reference()
