"""A port whose cron grammar strips spaces and tabs around the expression before splitting it,
taking ' 0 * * * *': RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._fields


def fields(expr: object) -> list[str]:
    return ORIGINAL(expr.strip(" \t") if isinstance(expr, str) and expr.strip(" \t") else expr)


patch(cron, "_fields", fields)

if __name__ == "__main__":
    serve_reference()
