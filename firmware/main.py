# hapenny: safe boot decides whether this start plays (shove/startup.py);
# then the board runs the game until Ctrl-C hands the serial port to the
# REPL (mpremote does this for deploys).
from shove import startup

go = startup.main()  # start-up's modules are let go before the game's are loaded
del startup
if go:
    from shove import app

    app.main()
