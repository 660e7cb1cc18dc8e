"""Duplicate emails under random SIGKILLs of `loopline run` (issue 19: at most one per kill).

    python -m bench.delivery_kills [--tasks 700] [--kills 150] [--seed 1]

Fills an embedded home with tasks whose reply is overdue (one contact each), then starts
`loopline run` against a local SMTP server again and again, killing each worker once SMTP took a
random number of emails from it (1 to 5), until `--kills` kills; a last worker sends the rest.
Prints the emails SMTP took, the distinct ones (by Message-ID), the repeats and the repeats per kill.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from tests.e2e.kills import KilledRuns
from tests.servers import SmtpSink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=700)
    parser.add_argument("--kills", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    folder, smtp = Path(tempfile.mkdtemp(prefix="loopline-bench-")), SmtpSink()
    try:
        start = time.perf_counter()
        run = KilledRuns(folder / "home", smtp, args.tasks).run(args.kills, seed=args.seed, timeout=3600)
        elapsed = time.perf_counter() - start
    finally:
        smtp.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.tasks} tasks, {run.kills} kills of `loopline run` in {elapsed:.0f} s")
    print(f"emails SMTP took: {run.received} ({run.emails} distinct Message-IDs)")
    print(f"repeats: {run.duplicates} ({run.duplicates / max(run.emails, 1):.1%} of the emails), "
          f"{run.duplicates / max(run.kills, 1):.2f} per kill")


if __name__ == "__main__":
    main()
