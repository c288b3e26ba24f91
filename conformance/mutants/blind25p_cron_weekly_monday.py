"""A port whose @weekly macro fires on Mondays (0 0 * * 1, the ISO week), not Sundays:
RWQ-SCHED-006."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron

patch(cron, "MACROS", {**cron.MACROS, "@weekly": "0 0 * * 1"})

if __name__ == "__main__":
    serve_reference()
