"""A port whose cron grammar also takes six fields, reading the first as seconds and dropping it
(as Quartz-style libraries do): RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._fields


def fields(expr: object) -> list[str]:
    if isinstance(expr, str) and len(cron._SEPARATOR.split(expr.strip(" \t"))) == 6:
        expr = " ".join(cron._SEPARATOR.split(expr.strip(" \t"))[1:])
    return ORIGINAL(expr)


patch(cron, "_fields", fields)

if __name__ == "__main__":
    serve_reference()
