"""Swaps two directory entries as fast as it can until SIGTERM, then prints how many swaps it made.

Usage: swap.py A B [exchange|rename]. `exchange` uses renameat2(RENAME_EXCHANGE), so one of the
two names always exists; `rename` moves A aside, moves B into A's place and back (plain
rename(2), which an unprivileged process without renameat2 also has).
"""
import ctypes
import os
import signal
import sys

a, b, mode = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else "exchange")
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_EXCHANGE = 2
stop = False


def on_term(_signo, _frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
ea, eb = a.encode(), b.encode()
aside = (a + ".aside").encode()
swaps = 0
print("ready", flush=True)
while not stop:
    if mode == "exchange":
        if libc.renameat2(AT_FDCWD, ea, AT_FDCWD, eb, RENAME_EXCHANGE) != 0:
            sys.exit(f"renameat2 failed: {os.strerror(ctypes.get_errno())}")
    else:
        os.rename(a, aside)
        os.rename(b, a)
        os.rename(a, b)
        os.rename(aside, a)
    swaps += 1
# Leave the tree as it was: an odd number of exchanges is undone by one more.
if mode == "exchange" and swaps % 2 == 1:
    libc.renameat2(AT_FDCWD, ea, AT_FDCWD, eb, RENAME_EXCHANGE)
    swaps += 1
print(swaps, flush=True)
