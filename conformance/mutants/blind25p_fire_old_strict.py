"""A port whose fire calls a slot old only when it is before the watermark, so the watermark's own
slot fires again: RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "elseif mark_ms and slot <= mark_ms then", "elseif mark_ms and slot < mark_ms then")
if __name__ == "__main__":
    serve_reference()
