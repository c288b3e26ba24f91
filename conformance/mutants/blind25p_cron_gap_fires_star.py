"""A port whose cron walk fires a wall time in a gap (offset before the change) even when the hour
field is *: RWQ-SCHED-006."""

from _blind25p import patch_instants, serve_reference

patch_instants(
    lambda first, second, star: ([first, second] if star else [first]) if second > first else [first]
)

if __name__ == "__main__":
    serve_reference()
