# Runs at every start, before main.py (and alone after a raw-REPL soft
# reset). Nothing to set up yet: the board layer configures its own pins.
