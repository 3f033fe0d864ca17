# hapenny: the board runs the game from power-up until Ctrl-C hands the
# serial port to the REPL (mpremote does this for deploys).
from shove import app

app.main()
