"""A port that takes a day field starting with * (*/2, */1) as unrestricted when choosing between
the AND and the OR of the day fields: RWQ-SCHED-005."""

from _blind25p import patch_parse, replace, serve_reference
from rwq.protocol import cron

patch_parse(
    lambda schedule, expr: replace(
        schedule,
        or_days=not cron._fields(expr)[2].startswith("*") and not cron._fields(expr)[4].startswith("*"),
    )
)

if __name__ == "__main__":
    serve_reference()
