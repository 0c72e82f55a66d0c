"""`python -m tests.mutants`: score the feature files against the catalogue (docs/mutants.md): the
broken SolArs they must fail (mutants) and the conforming ones they must pass (variants).

Exit 0 when every mutant is killed with a conformance message except the documented equivalents
(which must survive), every variant and the unmutated suite pass; 1 otherwise; 4 for bad
arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from tests.mutants.catalogue import all_mutants, find
from tests.mutants.model import Mutant
from tests.mutants.run import CRASHED, ERROR, FALSE_ALARM, KILLED, PASSED, Outcome, run_all


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__)
    parser.add_argument(
        "ids", nargs="*", metavar="ID", help="only these mutants and variants (default: all)"
    )
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
                f"no mutant {mutant_id!r}; `python -m tests.mutants --list` lists them",
                file=sys.stderr,
            )
            raise SystemExit(4) from None
    return chosen


def _list(mutants: list[Mutant]) -> None:
    width = max(len(m.id) for m in mutants)
    broken = [m for m in mutants if not m.conforming]
    conforming = [m for m in mutants if m.conforming]
    if broken:
        print(f"mutants ({len(broken)}): broken SolArs every one of which a scenario must fail")
    for m in broken:
        mark = " (equivalent)" if m.equivalent else ""
        print(f"{m.id:<{width}}  [{', '.join(m.rows)}]  {m.description}{mark}")
    if conforming:
        print(f"variants ({len(conforming)}): conforming SolArs that every scenario must pass")
    for m in conforming:
        profile = f" (profile: {_profile(m)})" if m.profile else ""
        print(f"{m.id:<{width}}  [{', '.join(m.rows)}]  {m.description}{profile}")


def _profile(mutant: Mutant) -> str:
    return ", ".join(f"{key} = {value!r}" for key, value in mutant.profile)


def _flag(outcome: Outcome) -> str:
    if outcome.expected:
        return ""
    if outcome.verdict in (ERROR, CRASHED, FALSE_ALARM):
        return f"  <-- {outcome.verdict}"
    return "  <-- not killed" if not outcome.conforming else "  <-- failed"


def _line(outcome: Outcome) -> str:
    return (
        f"{outcome.name:<44} {outcome.verdict:<11} {outcome.seconds:6.1f}s  {outcome.killer}"
        f"{_flag(outcome)}"
    )


def _markdown(outcomes: list[Outcome]) -> None:
    broken = [o for o in outcomes if o.mutant is not None and not o.mutant.conforming]
    conforming = [o for o in outcomes if o.mutant is not None and o.mutant.conforming]
    if broken:
        print("\n| mutant | breaks | what it breaks | verdict | killed by |")
        print("|---|---|---|---|---|")
    for o in broken:
        assert o.mutant is not None
        rows = ", ".join(f"`{r}`" for r in o.mutant.rows)
        print(f"| `{o.name}` | {rows} | {o.mutant.description} | {o.verdict} | {o.killer} |")
    if conforming:
        print("\n| variant | keeps | the choice it makes | profile | verdict | false alarm |")
        print("|---|---|---|---|---|---|")
    for o in conforming:
        assert o.mutant is not None
        rows = ", ".join(f"`{r}`" for r in o.mutant.rows)
        profile = ", ".join(f"`{k} = {v!r}`" for k, v in o.mutant.profile)
        print(
            f"| `{o.name}` | {rows} | {o.mutant.description} | {profile} | {o.verdict} | "
            f"{o.killer} |"
        )


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    mutants = _chosen(args.ids)
    if args.list:
        _list(mutants)
        return 0
    started = time.monotonic()
    variants = sum(1 for m in mutants if m.conforming)
    print(
        f"{len(mutants) - variants} mutants, {variants} variants and the unmutated suite, "
        f"{args.jobs} at a time",
        flush=True,
    )
    outcomes = run_all(
        mutants,
        jobs=args.jobs,
        timeout=args.timeout,
        marker="spec" if args.spec_only else None,
        progress=lambda o: print(f"  {_line(o)}", flush=True),
    )
    wall = time.monotonic() - started
    print(f"\n{'mutant or variant':<44} {'verdict':<11} {'time':>7}  killed by, or false alarm")
    for outcome in outcomes:
        print(_line(outcome))
    if args.markdown:
        _markdown(outcomes)
    broken = Counter(o.verdict for o in outcomes if o.mutant and not o.mutant.conforming)
    conforming = Counter(o.verdict for o in outcomes if o.mutant and o.mutant.conforming)
    wrong = [o for o in outcomes if not o.expected]
    killed = broken[KILLED]
    judged = sum(broken.values()) - broken["equivalent"]
    score = 100.0 * killed / judged if judged else 100.0
    print(
        f"\nscore: {killed}/{judged} killed ({score:.1f} %), {broken['survived']} survived, "
        f"{broken[CRASHED]} crashed (a harness exception, not a verdict), "
        f"{broken['equivalent']} equivalent, {broken[ERROR]} errors"
    )
    passing = conforming[PASSED]
    print(
        f"variants: {passing}/{sum(conforming.values())} passed, "
        f"{conforming[FALSE_ALARM]} false alarms, {conforming[ERROR]} errors; "
        f"{wall:.0f} s wall with {args.jobs} processes"
    )
    if args.spec_only:
        alone = [
            o.name
            for o in outcomes
            if o.mutant and not o.conforming and not o.mutant.equivalent and o.verdict != KILLED
        ]
        print(
            f"killed only by @defined-here scenarios ({len(alone)}): {', '.join(alone) or 'none'}"
        )
        judged_wrongly = broken[ERROR] + broken[CRASHED] + sum(conforming.values()) - passing
        return 1 if judged_wrongly or not outcomes[0].expected else 0
    for outcome in wrong:
        print(f"NOT AS CATALOGUED: {_line(outcome)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
