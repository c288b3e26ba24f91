"""A port whose cron grammar splits fields on spaces only, refusing a tab between fields:
RWQ-SCHED-004."""

import re

from _blind25p import patch, serve_reference
from rwq.protocol import cron

patch(cron, "_SEPARATOR", re.compile(r" +"))

if __name__ == "__main__":
    serve_reference()
