"""A port whose remove deletes the definition and the payload but leaves the watermark and the
pause behind: RWQ-SCHED-015."""

from _blind25p import edit, serve_reference

edit("schedule", "for _, key in ipairs({data, fired, paused}) do", "for _, key in ipairs({data}) do")
if __name__ == "__main__":
    serve_reference()
