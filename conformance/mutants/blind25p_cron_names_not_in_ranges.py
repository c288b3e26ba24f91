"""A port whose cron grammar takes month and day names as single values only, refusing a range of
names such as MON-FRI: RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.errors import InvalidArgument
from rwq.protocol import cron

ORIGINAL = cron._check_ranges


def check_ranges(text: str, spec: cron._Field) -> None:
    for item in text.split(","):
        start, dash, end = item.partition("/")[0].partition("-")
        if dash and (start.isalpha() or end.isalpha()):
            raise InvalidArgument(f"cron {spec.name} range {item!r} must be numbers (RWQ-SCHED-004)")
    ORIGINAL(text, spec)


patch(cron, "_check_ranges", check_ranges)

if __name__ == "__main__":
    serve_reference()
