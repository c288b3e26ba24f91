"""A port whose fire adds a slot's item although a dead item has that id (it checks the item key and
the delayed set only): RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "or (types[dead] and redis.call('ZSCORE', dead, id)) then", "then")
if __name__ == "__main__":
    serve_reference()
