"""Run a command beside N processes that burn CPU, then stop them: a busy machine on demand.

    python benchmarks/with_load.py 2 -- python -m pytest -q -n 2 --dist loadfile
    python benchmarks/with_load.py 8 -- grader grade submissions --problem tied_lm_head --jobs 2 --timeout 2 --out /tmp/x

The burners are plain Python loops at normal priority (each keeps one core busy when it has
one), started before the command and killed when it ends, whatever its exit status; the
command's exit status is this script's. The load average is printed before and after.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys


def _burn() -> None:
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def main(argv: list[str]) -> int:
    if "--" not in argv or not argv[0].isdigit():
        sys.stderr.write("usage: with_load.py N -- COMMAND...\n")
        return 2
    count, command = int(argv[0]), argv[argv.index("--") + 1:]
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(count)]
    for b in burners:
        b.start()
    sys.stderr.write(f"with_load: {count} burners; load average {os.getloadavg()}\n")
    try:
        return subprocess.call(command)
    finally:
        sys.stderr.write(f"with_load: load average at the end {os.getloadavg()}\n")
        for b in burners:
            b.kill()
            b.join()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
