"""All benchmarks, one after another: `make bench` (BENCH_SIZES to choose the sim's sizes).

python -m tests.benchmarks [SIZES...]     # default: 1 10 100 1000 10000
"""

from __future__ import annotations

import sys

from tests.benchmarks import sim_scale, wait_overhead

DEFAULT_SIZES = ["1", "10", "100", "1000", "10000"]


def main(argv: list[str]) -> int:
    print("## N Targets in one namespace on sim\n")
    sim_scale.main(argv or DEFAULT_SIZES)
    print("\n## The harness's overhead per wait\n")
    wait_overhead.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
