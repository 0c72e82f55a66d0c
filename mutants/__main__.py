"""`python -m mutants`: score the feature files against the mutation catalogue (docs/mutants.md).

Exit 0 when every mutant is killed except the documented equivalents (which must survive) and
the unmutated suite passes; 1 otherwise; 4 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from mutants.catalogue import all_mutants, find
from mutants.model import Mutant
from mutants.run import ERROR, KILLED, Outcome, run_all


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mutants", description=__doc__)
    parser.add_argument("ids", nargs="*", metavar="ID", help="only these mutants (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="pytest processes at a time (2)")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds before a run counts as an error"
    )
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument(
        "--spec-only",
        action="store_true",
        help="run only the @spec scenarios: the mutants that survive are killed by @defined-here "
        "scenarios alone (a report; exits non-zero only on errors)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the result table as Markdown too"
    )
    return parser.parse_args(argv)


def _chosen(ids: list[str]) -> list[Mutant]:
    if not ids:
        return all_mutants()
    chosen = []
    for mutant_id in ids:
        try:
            chosen.append(find(mutant_id))
        except KeyError:
            print(
                f"no mutant {mutant_id!r}; `python -m mutants --list` lists them", file=sys.stderr
            )
            raise SystemExit(4) from None
    return chosen


def _list(mutants: list[Mutant]) -> None:
    width = max(len(m.id) for m in mutants)
    for m in mutants:
        mark = " (equivalent)" if m.equivalent else ""
        print(f"{m.id:<{width}}  [{', '.join(m.rows)}]  {m.description}{mark}")


def _line(outcome: Outcome) -> str:
    flag = "" if outcome.expected else "  <-- "
    flag += "" if outcome.expected else ("not killed" if outcome.verdict != ERROR else "error")
    return (
        f"{outcome.name:<44} {outcome.verdict:<10} {outcome.seconds:6.1f}s  {outcome.killer}{flag}"
    )


def _markdown(outcomes: list[Outcome]) -> None:
    print("\n| mutant | breaks | what it breaks | verdict | killed by |")
    print("|---|---|---|---|---|")
    for o in outcomes:
        if o.mutant is None:
            continue
        rows = ", ".join(f"`{r}`" for r in o.mutant.rows)
        print(f"| `{o.name}` | {rows} | {o.mutant.description} | {o.verdict} | {o.killer} |")


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    mutants = _chosen(args.ids)
    if args.list:
        _list(mutants)
        return 0
    started = time.monotonic()
    print(f"{len(mutants)} mutants and the unmutated suite, {args.jobs} at a time", flush=True)
    outcomes = run_all(
        mutants,
        jobs=args.jobs,
        timeout=args.timeout,
        marker="spec" if args.spec_only else None,
        progress=lambda o: print(f"  {_line(o)}", flush=True),
    )
    wall = time.monotonic() - started
    print("\nmutant                                       verdict      time  killed by")
    for outcome in outcomes:
        print(_line(outcome))
    if args.markdown:
        _markdown(outcomes)
    counts = Counter(o.verdict for o in outcomes if o.mutant is not None)
    wrong = [o for o in outcomes if not o.expected]
    killed = counts[KILLED]
    judged = len(mutants) - counts["equivalent"]
    score = 100.0 * killed / judged if judged else 100.0
    print(
        f"\nscore: {killed}/{judged} killed ({score:.1f} %), {counts['survived']} survived, "
        f"{counts['equivalent']} equivalent, {counts[ERROR]} errors; "
        f"{wall:.0f} s wall with {args.jobs} processes"
    )
    if args.spec_only:
        alone = [
            o.name for o in outcomes if o.mutant and not o.mutant.equivalent and o.verdict != KILLED
        ]
        print(
            f"killed only by @defined-here scenarios ({len(alone)}): {', '.join(alone) or 'none'}"
        )
        return 1 if counts[ERROR] or not outcomes[0].expected else 0
    for outcome in wrong:
        print(f"NOT AS CATALOGUED: {_line(outcome)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
