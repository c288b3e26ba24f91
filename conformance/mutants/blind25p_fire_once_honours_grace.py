"""A port whose fire applies grace_ms under missed = once too, so the one late slot a scheduler
offers is refused as late: RWQ-SCHED-010."""

from _blind25p import edit, serve_reference

edit("fire", "local skip = d.missed ~= 'once'", "local skip = true")
if __name__ == "__main__":
    serve_reference()
