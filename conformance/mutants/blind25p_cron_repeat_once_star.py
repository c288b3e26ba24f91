"""A port whose cron walk fires a repeated wall time once (its earlier instant) even when the hour
field is *: RWQ-SCHED-006."""

from _blind25p import patch_instants, serve_reference

patch_instants(lambda first, second, star: [first] if second > first else ([] if star else [first]))

if __name__ == "__main__":
    serve_reference()
