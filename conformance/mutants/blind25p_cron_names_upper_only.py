"""A port whose cron grammar takes month and day names in upper case only (JAN, MON), refusing
jan and Mon: RWQ-SCHED-004."""

import re

from _blind25p import patch, serve_reference
from rwq.protocol import cron


def strict(field: cron._Field) -> cron._Field:
    if not field.names:
        return field
    text = field.pattern.pattern
    for name in field.names:
        text = text.replace(name, name.upper())
    return cron._Field(field.name, field.least, field.greatest, field.names, re.compile(text, re.ASCII))


patch(cron, "_FIELDS", tuple(strict(f) for f in cron._FIELDS))

if __name__ == "__main__":
    serve_reference()
