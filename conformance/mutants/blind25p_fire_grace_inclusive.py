"""A port whose fire counts a slot exactly grace_ms old as late (>= where SPEC says more than):
RWQ-SCHED-010."""

from _blind25p import edit, serve_reference

edit("fire", "elseif skip and now - slot > grace then", "elseif skip and now - slot >= grace then")
if __name__ == "__main__":
    serve_reference()
