"""B6: a Redis URL whose password holds `#`, `?` or `/` unencoded (a generated password pasted into
RWQ_URL) is printed in full by every `rwq` command that opens it ("cannot use --url redis://:...
@host"), and partly by `rwq worker`'s log ("... as 'hun'"): `redacted` cuts the userinfo at the
first `#`/`?`/`/`, so it finds no password to mask. Also `?Password=` (any query key redis-py
does not know) ends in a traceback rather than a one-line error.

    .venv/bin/python redteam/b6_password_hash_leak.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RWQ = str(Path(sys.executable).with_name("rwq"))
SECRET = "Xk9#q2/Zr7"

for argv in (["stats", "--prefix", "jobs"], ["queues"], ["dead", "list", "--prefix", "jobs"], ["worker", "json:loads", "--prefix", "jobs"]):
    for url in (f"redis://:{SECRET}@127.0.0.1:6399/0", f"redis://user:{SECRET}@127.0.0.1:6399/0"):
        done = subprocess.run([RWQ, *argv, "--url", url], capture_output=True, text=True, timeout=30)
        out = (done.stdout + done.stderr).strip()
        leaked = [part for part in (SECRET, "Xk9", "q2/Zr7") if part in out.replace(url, "<URL>") or part in out]
        print(f"rwq {argv[0]:7} exit {done.returncode} leaks {leaked}: {out.splitlines()[-1][:150]}")
done = subprocess.run([RWQ, "stats", "--prefix", "jobs", "--url", "redis://127.0.0.1:6399/0?Password=x"], capture_output=True, text=True, timeout=30)
print(f"?Password=: exit {done.returncode}, {len((done.stdout + done.stderr).splitlines())} lines, last: {(done.stdout + done.stderr).splitlines()[-1][:120]}")
