"""A port that takes every field of a macro as restricted, so @hourly fires a repeated hour once
and a gap's hour read with the offset before it: RWQ-SCHED-006."""

from _blind25p import patch_parse, replace, serve_reference

patch_parse(lambda schedule, expr: replace(schedule, hour_star=False) if expr.startswith("@") else schedule)

if __name__ == "__main__":
    serve_reference()
