"""A port whose cron walk never fires a wall time in a gap, the hour field restricted or not:
RWQ-SCHED-006."""

from _blind25p import patch_instants, serve_reference

patch_instants(lambda first, second, star: ([first, second] if star else [first]) if second > first else [])

if __name__ == "__main__":
    serve_reference()
