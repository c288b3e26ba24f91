"""A port whose cron walk reads every wall time in UTC, storing tz but never using it:
RWQ-SCHED-006."""

from zoneinfo import ZoneInfo

from _blind25p import patch_parse, replace, serve_reference

patch_parse(lambda schedule, expr: replace(schedule, zone=ZoneInfo("UTC")))

if __name__ == "__main__":
    serve_reference()
