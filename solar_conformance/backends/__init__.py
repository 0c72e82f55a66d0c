"""The backends: sim (in memory), local (real processes), kind (real clusters), existing (a
landscape given by a file)."""
