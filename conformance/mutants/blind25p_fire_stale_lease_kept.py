"""A port whose fire leaves the lease keys an earlier item of the same id left behind (add deletes
them): RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit(
    "fire",
    "then redis.call('DEL', keys[3 * c - 1], keys[3 * c]) end",
    "then end",
)

if __name__ == "__main__":
    serve_reference()
