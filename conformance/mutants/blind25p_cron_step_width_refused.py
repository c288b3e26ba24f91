"""A port whose cron grammar refuses a step equal to its field's width (*/60, */24, */7), taking
the widths as exclusive bounds: RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

STEPS = ("0?[1-9]|[1-5][0-9]", "0?[1-9]|1[0-9]|2[0-3]", "0?[1-9]|[12][0-9]|30", "0?[1-9]|1[01]", "0?[1-6]")
VALUES = ("[0-5]?[0-9]", "[01]?[0-9]|2[0-3]", "0?[1-9]|[12][0-9]|3[01]", "0?[1-9]|1[0-2]", "0?[0-6]")
patch(
    cron,
    "_FIELDS",
    tuple(
        cron._Field(f.name, f.least, f.greatest, f.names, cron._pattern(value, step, f.names))
        for f, value, step in zip(cron._FIELDS, VALUES, STEPS, strict=True)
    ),
)

if __name__ == "__main__":
    serve_reference()
