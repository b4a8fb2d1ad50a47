"""The exercise page's HTTP app (Starlette): the page, its static files and the JSON API.

Every request needs the server's token, as Jupyter's: ``?token=...`` on any URL, or an
``Authorization: token ...`` header; without it, 403. The API (docs/formats.md):

- ``GET /api/problems``: ``[{"id", "title", "function", "frameworks"}]``;
- ``GET /api/problems/{id}``: the statement (Markdown and HTML), signature, shapes, dtypes and stubs;
- ``POST /api/check`` ``{"problem", "framework", "source"[, "shrink"]}``: the learner JSON report of
  ``grader check --format json`` of that source as a file (``"shrink": false``: ``--no-shrink``);
  header ``X-Grader-Attempt``: its id in the history. ``X-Grader-Session`` names the page: a
  second Run of one page cancels the first;
- ``GET /api/progress``: how the page's (``X-Grader-Session``) check is going;
- ``GET /api/history[?problem=ID]``, ``GET /api/attempts/{id}``,
  ``GET /api/attempts/{id}/heatmap?case=NAME`` (a PNG of a tolerance failure).

Bad input is a 4xx whose JSON body is ``{"error": "one line"}``.
"""
from __future__ import annotations

import asyncio
import base64
import hmac
import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from .checks import Cancelled, Checker, CheckFailed
from .history import History
from .problems import FRAMEWORKS, Catalog

HERE = Path(__file__).resolve().parent
#: the largest request body the API reads (a larger one is refused unread: 413)
MAX_BODY = 1 << 20
#: the most of a too-large body read before answering 413 (beyond it the connection is closed)
DRAIN_LIMIT = 16 << 20
#: the largest source a check takes, in UTF-8 bytes
MAX_SOURCE = 256 << 10


def error(status: int, message: str) -> JSONResponse:
    """An API error: ``{"error": message}`` with ``status``."""
    return JSONResponse({"error": message}, status_code=status)


class TokenGate:
    """ASGI middleware: a request whose ``?token=`` or ``Authorization: token ...`` is not the
    server's gets 403 (JSON under /api, text elsewhere), compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def allowed(self, scope: Scope) -> bool:
        """Whether the request carries the token (query or Authorization header)."""
        from urllib.parse import parse_qs
        given = []
        for value in parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", []):
            given.append(value.encode("latin-1", "replace"))
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                if scheme.lower() in (b"token", b"bearer"):
                    given.append(rest.strip())
        return any(hmac.compare_digest(g, self.token) for g in given)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (b"service-worker", b"script") in scope.get("headers", []):
            # the browser fetching a service worker's script (registering it, or checking one for an
            # update): this page has none. Another local user's page that served on this port
            # earlier could have registered one, which then read every URL of this server, the
            # token with it (attack round 63); its update check gets a worker that unregisters
            # itself and reloads its pages, whatever the path, with or without the token
            await Response(KILL_SWITCH, media_type="text/javascript",
                           headers={"Cache-Control": "no-store"})(scope, receive, send)
            return
        if scope["type"] == "http" and not self.allowed(scope):
            message = "a token is needed: open the URL grader serve printed (it ends with ?token=...)"
            if scope.get("path", "").startswith("/api/"):
                response: Response = error(403, message)
            else:
                response = PlainTextResponse(message + "\n", status_code=403)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


#: the service worker any script fetch of a service worker gets (:class:`TokenGate`): it takes over
#: from the one registered before, unregisters itself and reloads the pages it controlled
KILL_SWITCH = """// grader serve's exercise page has no service worker: this one removes any other
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.registration.unregister()
  .then(() => self.clients.matchAll({ type: "window" }))
  .then((pages) => Promise.all(pages.map((page) => page.navigate(page.url))))));
"""


class Site:
    """The page's state: the problems, the checker, the history and the token."""

    def __init__(self, token: str, checker: Checker, history: History, catalog: Catalog) -> None:
        self.token = token
        self.checker = checker
        self.history = history
        self.catalog = catalog
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(default=True, default_for_string=True))

    # -- the page ------------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        """``/``: the first problem's page."""
        first = next(iter(self.catalog.problems), None)
        if first is None:
            return PlainTextResponse("no problem specs found\n", status_code=404)
        return RedirectResponse(f"/problems/{first}?token={self.token}", status_code=302)

    async def page(self, request: Request) -> Response:
        """``/problems/{id}``: the exercise page of one problem."""
        problem = self.catalog.problems.get(request.path_params["problem"])
        if problem is None:
            return PlainTextResponse("no such problem; see the list at /\n", status_code=404)
        detail = self.catalog.detail(problem)
        html = self.templates.get_template("page.html").render(
            token=self.token, problem=detail, problems=[self.catalog.summary(p) for p in self.catalog.problems.values()],
            framework_names={f: FRAMEWORKS[f][0] for f in FRAMEWORKS},
            config={"token": self.token, "problem": problem.id, "function": problem.function,
                    "stubs": detail["stubs"], "frameworks": detail["frameworks"],
                    "drafts": await asyncio.to_thread(self.history.drafts, problem.id),
                    "names": detail["framework_names"]})
        return HTMLResponse(html, headers={"Cache-Control": "no-store",
                                           "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                                           "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"})

    # -- the API -------------------------------------------------------------------------------
    async def api_problems(self, request: Request) -> Response:
        """``GET /api/problems``."""
        return JSONResponse([self.catalog.summary(p) for p in self.catalog.problems.values()])

    async def api_problem(self, request: Request) -> Response:
        """``GET /api/problems/{id}``."""
        problem = self.catalog.problems.get(request.path_params["problem"])
        if problem is None:
            return error(404, f"unknown problem {request.path_params['problem']!r}; GET /api/problems lists them")
        return JSONResponse(self.catalog.detail(problem))

    async def _body(self, request: Request) -> bytes | Response:
        """The request body, up to :data:`MAX_BODY` bytes; a larger one is 413, after reading
        (and dropping) up to :data:`DRAIN_LIMIT` bytes of it, so that a client still sending
        hears the answer rather than a reset connection."""
        length = request.headers.get("content-length")
        if length is not None and not length.isdigit():
            return error(400, "the Content-Length header is not a number")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_LIMIT:
                break
            if size <= MAX_BODY:
                chunks.append(chunk)
        if size > MAX_BODY:
            return error(413, f"the request body is larger than {MAX_BODY} bytes (1 MiB)")
        return b"".join(chunks)

    async def api_draft(self, request: Request) -> Response:
        """``PUT /api/drafts/{problem}/{framework}``, body ``{"source": "..."}``: keep the editor's
        code (204); the page's config has the drafts of its problem."""
        problem = self.catalog.problems.get(request.path_params["problem"])
        if problem is None:
            return error(404, f"unknown problem {request.path_params['problem'][:100]!r}; GET /api/problems lists them")
        framework = request.path_params["framework"]
        if framework not in self.catalog.detail(problem)["frameworks"]:
            return error(404, f"{problem.id} is not graded in {framework[:40]!r}")
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        try:
            source = json.loads(body.decode("utf-8"))["source"]
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return error(400, 'the body is not JSON of the form {"source": "..."}')
        if not isinstance(source, str):
            return error(400, "source is not a string")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in source):   # SQLite stores UTF-8 only (round 62: a 500)
            return error(422, "the source holds an unpaired surrogate: it is not a Python file")
        await asyncio.to_thread(self.history.save_draft, problem.id, framework, source)
        return Response(status_code=204)

    async def api_check(self, request: Request) -> Response:
        """``POST /api/check``: validate, run the check, store the attempt, return the report."""
        started = time.monotonic()
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        try:
            data = json.loads(body.decode("utf-8"))
        except UnicodeDecodeError:
            return error(400, "the request body is not UTF-8")
        except (ValueError, RecursionError):
            return error(400, 'the request body is not JSON: send {"problem": ID, "framework": NAME, "source": TEXT}')
        if not isinstance(data, dict):
            return error(400, 'the request body must be a JSON object: {"problem": ID, "framework": NAME, "source": TEXT}')
        problem_id, framework, source = data.get("problem"), data.get("framework"), data.get("source")
        if not isinstance(problem_id, str) or not problem_id:
            return error(422, '"problem" is missing: give a problem id (GET /api/problems lists them)')
        problem = self.catalog.problems.get(problem_id)
        if problem is None:
            return error(404, f"unknown problem {problem_id[:100]!r}; GET /api/problems lists them")
        offered = self.catalog.frameworks_of(problem)
        if framework not in FRAMEWORKS:
            return error(422, f'"framework" must be one of {", ".join(FRAMEWORKS)}')
        if framework not in offered:
            why = "is not installed here" if framework not in self.catalog.installed else f"is not graded for {problem_id}"
            return error(422, f"{framework} {why}; this problem takes {', '.join(offered) or 'no installed framework'}")
        if not isinstance(source, str) or not source.strip():
            return error(422, '"source" is missing or empty: send the Python file\'s text')
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > MAX_SOURCE:
            return error(413, f"the source is {size} bytes; at most {MAX_SOURCE} are checked")
        if "\x00" in source or any(0xD800 <= ord(c) <= 0xDFFF for c in source):
            return error(422, "the source holds a NUL character or an unpaired surrogate: it is not a Python file")
        shrink = data.get("shrink", True)
        if not isinstance(shrink, bool):
            return error(422, '"shrink" must be true or false (search for the smallest failing case; default true)')
        session = self.session(request)
        parsed = time.monotonic()
        try:
            result = await self.checker.run(session, problem_id, framework, source, shrink=shrink)
        except Cancelled:
            return error(409, "cancelled: a newer Run of this page replaced this check")
        except CheckFailed as exc:
            return error(422, f"the check gave no report: {exc}")
        checked = time.monotonic()
        attempt = await asyncio.to_thread(self.history.add, problem_id, framework, source, result.report,
                                          result.seconds)
        stored = time.monotonic()
        response = JSONResponse(result.report)
        # where the request's time went, in milliseconds (the browser's devtools show it):
        # reading and checking the request, the check (waiting for a cancelled one included)
        # and its phases (checks.phase_split), storing the attempt, encoding the report
        timing = {"parse": parsed - started, "check": checked - parsed,
                  **{f"check-{k}": v for k, v in result.phases.items()},
                  "history": stored - checked, "encode": time.monotonic() - stored}
        response.headers.update({"X-Grader-Attempt": str(attempt), "X-Grader-Seconds": f"{result.seconds:.3f}",
                                 "X-Grader-Path": self.checker.last_path,
                                 "Server-Timing": ", ".join(f"{k};dur={v * 1000:.1f}" for k, v in timing.items())})
        return response

    @staticmethod
    def session(request: Request) -> str:
        """The page a request comes from: its ``X-Grader-Session`` header (else one shared session)."""
        return request.headers.get("x-grader-session", "default")[:100]

    async def api_progress(self, request: Request) -> Response:
        """``GET /api/progress``: how this session's check is going (:meth:`Checker.progress`)."""
        return JSONResponse(self.checker.progress(self.session(request)), headers={"Cache-Control": "no-store"})

    async def api_history(self, request: Request) -> Response:
        """``GET /api/history[?problem=ID]``: the newest attempts, newest first."""
        rows = await asyncio.to_thread(self.history.list, request.query_params.get("problem"))
        return JSONResponse(rows)

    async def _attempt(self, request: Request) -> dict[str, Any] | Response:
        raw = request.path_params["attempt"]
        attempt = await asyncio.to_thread(self.history.get, int(raw)) if raw.isdigit() else None
        return attempt if attempt is not None else error(404, f"no attempt {raw[:20]!r}")

    async def api_attempt(self, request: Request) -> Response:
        """``GET /api/attempts/{id}``: an attempt with its source and report."""
        attempt = await self._attempt(request)
        return attempt if isinstance(attempt, Response) else JSONResponse(attempt)

    async def api_heatmap(self, request: Request) -> Response:
        """``GET /api/attempts/{id}/heatmap?case=NAME``: the PNG heat map of a failing case
        (:func:`grader.reports.notebook_html.heat_map_png`), 404 when it has none."""
        attempt = await self._attempt(request)
        if isinstance(attempt, Response):
            return attempt
        name = request.query_params.get("case", "")
        case = next((c for c in attempt["report"].get("cases", []) if c.get("name") == name), None)
        if case is None:
            return error(404, f"attempt {attempt['id']} has no shown case {name[:100]!r}")
        from ..reports.notebook_html import heat_map_png
        png = await asyncio.to_thread(heat_map_png, case)
        if not png:
            return error(404, f"case {name[:100]!r} has no heat map (no values nor tolerance grid, or no matplotlib)")
        return Response(base64.b64decode(png), media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


def create_app(token: str, checker: Checker | None = None, history: History | None = None,
               catalog: Catalog | None = None, problems_dir: str | None = None) -> ASGIApp:
    """The page's ASGI app behind :class:`TokenGate` (``token``)."""
    site = Site(token, checker or Checker(problems_dir=problems_dir), history or History(),
                catalog or Catalog.load(problems_dir))
    app = Starlette(routes=[
        Route("/", site.index),
        Route("/problems/{problem}", site.page),
        Route("/api/problems", site.api_problems),
        Route("/api/problems/{problem}", site.api_problem),
        Route("/api/check", site.api_check, methods=["POST"]),
        Route("/api/drafts/{problem}/{framework}", site.api_draft, methods=["PUT"]),
        Route("/api/progress", site.api_progress),
        Route("/api/history", site.api_history),
        Route("/api/attempts/{attempt}", site.api_attempt),
        Route("/api/attempts/{attempt}/heatmap", site.api_heatmap),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ])
    app.state.site = site
    return TokenGate(app, token)
