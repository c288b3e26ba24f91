"""A port whose fire adds a slot's item although a delayed item has that id (it checks the item key
and the dead set only): RWQ-SCHED-008."""

from _blind25p import edit, serve_reference

edit("fire", "or (types[delayed] and redis.call('ZSCORE', delayed, id))", "")

if __name__ == "__main__":
    serve_reference()
