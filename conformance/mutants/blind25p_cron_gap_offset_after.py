"""A port whose cron walk reads a wall time in a gap with the offset in force after the change,
not before: RWQ-SCHED-006."""

from _blind25p import patch_instants, serve_reference

patch_instants(
    lambda first, second, star: (
        ([first, second] if star else [first]) if second > first else ([] if star else [second])
    )
)

if __name__ == "__main__":
    serve_reference()
