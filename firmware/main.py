# hapenny: safe boot decides whether this start plays (shove/startup.py);
# then the board runs the game until Ctrl-C hands the serial port to the
# REPL (mpremote does this for deploys).
from shove import startup

startup.main()
