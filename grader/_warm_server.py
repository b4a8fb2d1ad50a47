"""The warm grader's process (``python -I -m grader._warm_server``): see :mod:`grader.warm`,
which starts it and holds the protocol's description. Runs no learner code: each request is a
``grader check`` (:func:`grader.cli.main`), whose submission runs in a fresh sandboxed child."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from typing import IO


def serve(requests: IO[str], responses: IO[str]) -> int:
    """Answer requests until end of input or an interrupt (see the module docstring); 0.

    After each check it answered itself, it starts a spare child for the next check of the
    same framework (:func:`_prepare_spare`), which that check adopts: the notebook's next
    ``check(fn)`` does not wait for a child to start and import its framework."""
    from . import cli
    from .run import spare

    try:
        return _answer(requests, responses, cli)
    finally:
        spare.discard()


def _answer(requests: IO[str], responses: IO[str], cli) -> int:
    for line in requests:
        try:
            argv = json.loads(line)["argv"]
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
                raise ValueError("argv must be a list of strings")
        except (ValueError, KeyError, TypeError) as exc:
            responses.write(json.dumps({"code": 2, "stdout": "", "stderr": f"grader: error: bad request: {exc}\n"})
                            + "\n")
            responses.flush()
            continue
        served = _served(argv)   # the user's grader serve, when one runs: a forked grader
        interrupted = False
        if served is not None:
            code, stdout, stderr = served
        else:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(argv, serve=False)
                except SystemExit as exc:  # argparse's usage errors
                    code = exc.code if isinstance(exc.code, int) else 2
                except KeyboardInterrupt:
                    code, interrupted = 130, True
            stdout, stderr = out.getvalue(), err.getvalue()
        interrupted = interrupted or code == 130
        responses.write(json.dumps({"code": code, "stdout": stdout, "stderr": stderr}) + "\n")
        responses.flush()
        if interrupted:
            return 0
        if served is None:
            _prepare_spare(argv, cli)
    return 0


def _prepare_spare(argv: list[str], cli) -> None:
    """Start a spare child (:mod:`grader.run.spare`) of the framework ``argv``'s check used, when
    that check would take one (a ``check`` with the default limits and tier); never raises."""
    from . import forkserver, forkserver_policy
    from .run import spare
    from .sandbox import choose_tier

    try:
        forkserver_policy.CLI.setdefault("build_parser", cli.build_parser)
        framework = forkserver_policy.spare_for({"argv": argv,
                                                 "framework": forkserver.framework_hint(argv, os.getcwd())})
        if framework is not None:
            tier, wrap = choose_tier("auto")
            spare.prepare(framework, forkserver.default_limits(), tier, wrap)
    except Exception:  # noqa: BLE001 - a spare is an optimisation: the next check starts its own child
        spare.discard()


def _served(argv: list[str]) -> tuple[int, str, str] | None:
    """``grader <argv>`` run by this user's ``grader serve`` (a ``check`` only), its output
    caught: (exit code, stdout, stderr), or None when no server answers."""
    from .forkserver_client import run_served_captured
    if argv[:1] != ["check"]:
        return None
    return run_served_captured(argv)


def main() -> int:
    """``python -I -m grader.warm``: serve on stdin and the stdout file descriptor."""
    responses = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    try:
        return serve(sys.stdin, responses)
    except KeyboardInterrupt:
        return 0




if __name__ == "__main__":
    sys.exit(main())
