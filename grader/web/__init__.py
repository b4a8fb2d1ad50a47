"""The exercise page of ``grader serve`` (issue 36): a learner reads a problem, writes the
function in a browser editor, presses Run and sees the verdict.

``grader serve`` starts this page's HTTP server as a process of its own
(:func:`grader.web.launch.start`): the fork server must keep one thread to fork safely, and an
HTTP server has an event loop and threads. The page's server (:mod:`grader.web.app`, Starlette
on uvicorn, bound to 127.0.0.1 behind a random token as Jupyter does) runs each check as
``grader check FILE --format json --audience learner`` of the source saved as a file
(:mod:`grader.web.checks`), which the fork server answers: the same sandbox, the same report.
Attempts are kept in SQLite in the user's data folder (:mod:`grader.web.history`).
"""
