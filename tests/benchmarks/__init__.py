"""Speed and memory of the harness and its sim, measured (never asserted): `make bench`."""
