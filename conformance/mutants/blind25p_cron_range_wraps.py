"""A port whose cron grammar takes a range whose start exceeds its end (22-2) and wraps it round:
RWQ-SCHED-004."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

patch(cron, "_check_ranges", lambda text, spec: None)

if __name__ == "__main__":
    serve_reference()
