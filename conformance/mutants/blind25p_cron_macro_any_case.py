"""A port whose cron grammar takes the macros in any case (@DAILY, @Hourly): RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._fields


def fields(expr: object) -> list[str]:
    if isinstance(expr, str) and expr.lower() in cron.MACROS:
        expr = expr.lower()
    return ORIGINAL(expr)


patch(cron, "_fields", fields)

if __name__ == "__main__":
    serve_reference()
