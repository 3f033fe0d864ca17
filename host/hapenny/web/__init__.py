"""`hapenny web`: the board's scoreboard and controls for any browser on the home network."""
