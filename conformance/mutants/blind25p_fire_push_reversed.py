"""A port whose fire pushes the added ids newest slot first (one LPUSH of the reversed list), so a
consumer leases the latest slot before the older ones: RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit(
    "fire",
    "for k, c in ipairs(added) do push[k] = ids[candidates[c]] end",
    "for k, c in ipairs(added) do push[#added + 1 - k] = ids[candidates[c]] end",
)

if __name__ == "__main__":
    serve_reference()
