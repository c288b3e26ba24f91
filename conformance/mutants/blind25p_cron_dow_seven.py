"""A port whose cron grammar takes 7 as a second Sunday in day-of-week, as Vixie cron does:
RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

DOW = cron._FIELDS[4]
patch(
    cron,
    "_FIELDS",
    (
        *cron._FIELDS[:4],
        cron._Field(DOW.name, 0, 7, DOW.names, cron._pattern("0?[0-7]", "0?[1-7]", DOW.names)),
    ),
)

if __name__ == "__main__":
    serve_reference()
