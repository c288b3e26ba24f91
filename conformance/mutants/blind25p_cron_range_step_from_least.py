"""A port whose cron expansion counts a range's step from the field's least value, not the range's
start (5-59/15 as 15,30,45): RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._for_croniter


def for_croniter(text: str, spec: cron._Field) -> str:
    items: list[str] = []
    for item in text.split(","):
        span, slash, step = item.partition("/")
        start, dash, end = span.partition("-")
        if slash and dash:
            low, high = cron._value(start, spec), cron._value(end, spec)
            picked = [v for v in range(low, high + 1) if (v - spec.least) % int(step) == 0]
            items.extend(str(v) for v in picked or [low])
        else:
            items.append(item)
    return ORIGINAL(",".join(items), spec)


patch(cron, "_for_croniter", for_croniter)

if __name__ == "__main__":
    serve_reference()
