"""A port whose client checks schedule names up to 255 bytes (a common key limit), leaving the
200-byte bound to the script: RWQ-SCHED-001."""

import re

from _blind25p import patch, serve_reference
from rwq.protocol import periodic

patch(periodic, "_NAME", re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}"))

if __name__ == "__main__":
    serve_reference()
