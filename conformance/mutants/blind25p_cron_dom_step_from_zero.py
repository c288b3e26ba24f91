"""A port whose cron expansion counts */n from 0 in day-of-month and month too (*/2 as 2,4,6...),
not from the field's least value 1: RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._for_croniter


def for_croniter(text: str, spec: cron._Field) -> str:
    items: list[str] = []
    for item in text.split(","):
        if spec.least == 1 and item.startswith("*/"):
            picked = [v for v in range(1, spec.greatest + 1) if v % int(item[2:]) == 0]
            items.extend(str(v) for v in picked or [1])
        else:
            items.append(item)
    return ORIGINAL(",".join(items), spec)


patch(cron, "_for_croniter", for_croniter)

if __name__ == "__main__":
    serve_reference()
