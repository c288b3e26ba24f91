"""A port whose fire trusts its scheduler and fires slots after the server's now instead of
answering early: RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "if slot > now then", "if false then")
if __name__ == "__main__":
    serve_reference()
