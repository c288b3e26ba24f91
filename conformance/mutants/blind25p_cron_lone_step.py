"""A port whose cron grammar takes a lone a/n (5/15 meaning 5-59/15), as croniter does:
RWQ-SCHED-004."""

import re

from _blind25p import patch, serve_reference
from rwq.protocol import cron


def loose(field: cron._Field) -> cron._Field:
    lone = r"(?:[0-9]{1,2}/[0-9]{1,2})"
    text = field.pattern.pattern
    item = f"(?:{lone}|{text})"
    return cron._Field(
        field.name,
        field.least,
        field.greatest,
        field.names,
        re.compile(f"{item}(?:,{item})*", field.pattern.flags),
    )


patch(cron, "_FIELDS", tuple(loose(f) for f in cron._FIELDS))

if __name__ == "__main__":
    serve_reference()
