"""hapenny: host tooling for the Shove Ha'penny dartboard firmware."""

__version__ = "0.1.0"
PROTOCOL = 1
