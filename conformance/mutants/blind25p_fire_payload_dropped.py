"""A port whose fire adds each slot's item with an empty payload, not the schedule's data:
RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "redis.call('SET', keys[3 * c - 2], payload or '')", "redis.call('SET', keys[3 * c - 2], '')")

if __name__ == "__main__":
    serve_reference()
