"""A port whose scheduler computes the definition's SHA1 in upper-case hex (its language's default
format), which fire refuses, so no slot's item is added: RWQ-SCHED-009 and RWQ-SCHED-002."""

import hashlib

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import StoredSchedule

patch(StoredSchedule, "digest", property(lambda self: hashlib.sha1(self.definition).hexdigest().upper()))

if __name__ == "__main__":
    serve_reference()
