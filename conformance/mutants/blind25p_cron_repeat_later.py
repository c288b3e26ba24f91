"""A port whose cron walk reads a repeated wall time with the offset after the change (its later
instant) when the hour field is restricted: RWQ-SCHED-006."""

from _blind25p import patch_instants, serve_reference

patch_instants(
    lambda first, second, star: (
        ([first, second] if star else [second]) if second > first else ([] if star else [first])
    )
)

if __name__ == "__main__":
    serve_reference()
