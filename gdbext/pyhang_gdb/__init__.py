"""pyhang's gdb side: the only code that imports `gdb`.

It collects what only gdb knows cheaply (threads, registers of frame 0, the
top native frames, the target's kind) and hands target memory to the native
library, which does all decoding.
"""
