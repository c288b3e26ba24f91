"""A port whose cron walk requires both day-of-month and day-of-week to match, even when both are
restricted: RWQ-SCHED-005."""

from _blind25p import patch_parse, replace, serve_reference

patch_parse(lambda schedule, expr: replace(schedule, or_days=False))

if __name__ == "__main__":
    serve_reference()
