# The soak runs in `make test` as a short run (SOAK_DARTS, default 100) and
# in full with `make soak` (HAPENNY_SOAK=1: 10,000 closures).
