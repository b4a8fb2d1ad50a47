// The exercise page's behaviour: the editor, the framework choice, Run (button or
// Ctrl/Cmd-Enter), the result and the history. Everything the report says is put in the page
// as text (textContent), never as HTML.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("config").textContent);
  const session = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2);
  const $ = (id) => document.getElementById(id);
  const names = config.names;
  let framework = config.frameworks[0] || "numpy";
  let runNumber = 0;

  // a failure's detail lines, then the traceback the report worded from its frames
function shownDetails(f) {
  return (f.details || []).concat(f.traceback ? [f.traceback] : []);
}

function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function api(path, options) {
    const opts = Object.assign({}, options || {});
    opts.headers = Object.assign({ "Authorization": "token " + config.token, "X-Grader-Session": session },
                                 opts.headers || {});
    return fetch(path, opts);
  }

  // -- drafts: one per problem and framework, kept by the server (behind the token) ---------------
  // The browser's storage belongs to the address 127.0.0.1:PORT, which another local user may
  // take once grader serve stops (attack round 61): nothing is kept there, and what an earlier
  // version (or a page another user served on this port: round 62) left there is removed, every
  // problem's, and never taken as a draft.
  const drafts = Object.assign({}, config.drafts || {});
  const saved = Object.assign({}, drafts);
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith("grader:draft:")) localStorage.removeItem(key);
  } catch (e) { /* no storage */ }
  function loadDraft(fw) {
    return drafts[fw] != null ? drafts[fw] : (config.stubs[fw] || "");
  }
  function putDraft(fw) {
    const text = drafts[fw];
    if (text == null || saved[fw] === text) return;
    saved[fw] = text;
    const body = JSON.stringify({ source: text });
    // keepalive: a save on leaving the page (another problem) still arrives; browsers cap such a body at 64 KiB
    api("/api/drafts/" + encodeURIComponent(config.problem) + "/" + encodeURIComponent(fw),
        { method: "PUT", headers: { "Content-Type": "application/json" }, body: body, keepalive: body.length < 60000 })
      .then((r) => { if (!r.ok) delete saved[fw]; }, () => { delete saved[fw]; });
  }
  function saveDraft() {
    drafts[framework] = editor.get();
    putDraft(framework);
  }

  const editor = window.GraderEditor.createEditor($("editor"), loadDraft(framework), run,
    "Code editor: your " + config.function + " function in " + (names[framework] || framework));
  function relabel() {
    editor.view.contentDOM.setAttribute("aria-label",
      "Code editor: your " + config.function + " function in " + (names[framework] || framework));
  }
  // arriving in the editor (Tab, the skip link) puts the cursor at the end of the code, not
  // before its first line: a second Tab there indented "import numpy" into a SyntaxError
  function toEnd() {
    const view = editor.view;
    if (view.state.selection.main.head === 0 && view.state.doc.length > 0) {
      view.dispatch({ selection: { anchor: view.state.doc.length } });
    }
  }
  editor.view.contentDOM.addEventListener("focus", toEnd);
  const skip = document.querySelector("a.skip");
  if (skip) skip.addEventListener("click", (e) => { e.preventDefault(); editor.focus(); toEnd(); });
  window.addEventListener("pagehide", saveDraft);
  let saveTimer = null;
  editor.view.dom.addEventListener("keyup", () => { clearTimeout(saveTimer); saveTimer = setTimeout(saveDraft, 500); });

  for (const radio of document.querySelectorAll('input[name="framework"]')) {
    radio.addEventListener("change", () => {
      if (!radio.checked) return;
      saveDraft();
      framework = radio.value;
      editor.set(loadDraft(framework));
      relabel();
    });
  }
  $("reset").addEventListener("click", () => { editor.set(config.stubs[framework] || ""); saveDraft(); editor.focus(); });
  $("run").addEventListener("click", run);
  // a problem opens on the Open button or Enter, not on each change: arrow keys move through
  // the list without leaving the page (WCAG 3.2.2)
  function openProblem() {
    const id = $("problem-select").value;
    if (id === config.problem) return;
    saveDraft();
    location.href = "/problems/" + encodeURIComponent(id) + "?token=" + encodeURIComponent(config.token);
  }
  $("open-problem").addEventListener("click", openProblem);
  $("problem-select").addEventListener("keydown", (event) => { if (event.key === "Enter") openProblem(); });

  // the shrink switch ("Find smallest failing case"), remembered in the browser; on by default
  const shrinkBox = $("shrink");
  try { if (localStorage.getItem("grader:shrink") === "off") shrinkBox.checked = false; } catch (e) { /* private mode */ }
  shrinkBox.addEventListener("change", () => {
    try { localStorage.setItem("grader:shrink", shrinkBox.checked ? "on" : "off"); } catch (e) { /* private mode */ }
  });

  // -- Run ----------------------------------------------------------------------------------------
  // A Run while one is in progress sends the new code at once: the server stops the earlier
  // check (its request answers 409, ignored here) and starts this one once it has ended, so two
  // never run. The progress shown is the newest Run's.
  let progress = null;     // the running check's timers
  async function run() {
    saveDraft();
    const mine = ++runNumber;
    const started = performance.now();
    startProgress(mine, started);
    $("run").setAttribute("aria-busy", "true");
    document.body.classList.add("running");
    let response, body;
    try {
      response = await api("/api/check", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ problem: config.problem, framework: framework, source: editor.get(),
                               shrink: shrinkBox.checked }),
      });
      body = await response.json();
    } catch (e) {
      if (mine !== runNumber) return;
      finish();
      showError("The grader did not answer (" + e.message + "). Is grader serve still running?");
      return;
    }
    if (mine !== runNumber) return;          // a newer Run replaced this one
    finish();
    const answered = performance.now();
    const seconds = ((answered - started) / 1000).toFixed(2);
    if (!response.ok) { showError(body.error || ("HTTP " + response.status)); return; }
    renderReport(body, response.headers.get("X-Grader-Attempt"), seconds);
    // Run -> verdict, for the browser test's record (docs/performance.md): from the Run (click
    // or key) to the verdict in the page, and the server's own split of the request
    const shown = performance.now();
    window.graderLastRun = { run: mine, ms: shown - started, answeredMs: answered - started,
                             renderMs: shown - answered, serverTiming: response.headers.get("Server-Timing"),
                             checkSeconds: Number(response.headers.get("X-Grader-Seconds")) };
    requestAnimationFrame(() => { if (window.graderLastRun.run === mine) window.graderLastRun.paintedMs = performance.now() - started; });
    loadHistory();
  }
  function finish() {
    $("run").removeAttribute("aria-busy");
    document.body.classList.remove("running");
    stopProgress();
  }

  // -- progress while a check runs: a spinner, the seconds so far, and the phase the server
  // reports (GET /api/progress): starting, case k of n, the shrink search, the hidden cases.
  // The status line (a polite live region) is told of a new phase and every 5 s, no more often.
  function progressText(p) {
    if (p.queued) return "Stopping the previous check…";
    if (p.phase === "cases" && p.total) return "Running case " + Math.min(p.done + 1, p.total) + " of " + p.total;
    if (p.phase === "shrink") return "Searching for the smallest failing case…";
    if (p.phase === "hidden") return "Running the " + p.total + " hidden case" + (p.total === 1 ? "" : "s") + "…";
    if (p.phase === "import") return "Starting: the sandbox imports your code…";
    return "Starting the check…";
  }
  function startProgress(mine, started) {
    stopProgress();
    const box = $("progress"), bar = $("progress-bar");
    const what = "Running the " + (names[framework] || framework) + " check";
    let said = "", lastSaid = performance.now(), text = "Starting the check…";
    box.hidden = false;
    $("progress-text").textContent = text;
    $("elapsed").textContent = "0.0 s";
    bar.removeAttribute("value");            // indeterminate until the case count is known
    $("status").textContent = what + "…";
    const state = { mine: mine, timers: [] };
    progress = state;
    state.timers.push(setInterval(() => {
      const s = (performance.now() - started) / 1000;
      $("elapsed").textContent = s.toFixed(1) + " s";
      if (performance.now() - lastSaid >= 5000) {
        lastSaid = performance.now();
        $("status").textContent = what + ": " + text + " (" + Math.round(s) + " s)";
      }
    }, 100));
    async function poll() {
      if (progress !== state) return;
      let p;
      try { p = await (await api("/api/progress", { cache: "no-store" })).json(); } catch (e) { p = null; }
      if (progress !== state) return;
      if (p && (p.running || p.queued)) {   // (not yet started, or ended: the text stays)
        text = progressText(p);
        $("progress-text").textContent = text;
        if (p.phase === "cases" && p.total) { bar.max = p.total; bar.value = p.done; }
        else if (p.phase === "shrink" || p.phase === "hidden") { bar.max = 1; bar.value = 1; }
        const phase = p.queued ? "queued" : (p.phase || "starting");
        if (phase !== said) {   // a new phase, not each case, is announced
          said = phase;
          lastSaid = performance.now();
          $("status").textContent = what + ": " + text;
        }
      }
      state.timers.push(setTimeout(poll, 400));
    }
    // a quick check answers before the first poll: nothing is asked of the server for it
    state.timers.push(setTimeout(poll, 300));
  }
  function stopProgress() {
    if (progress) for (const t of progress.timers) { clearInterval(t); clearTimeout(t); }
    progress = null;
    $("progress").hidden = true;
  }

  function showError(message) {
    $("status").textContent = "Not checked: " + message;
    const body = $("result-body");
    body.replaceChildren(el("p", { class: "verdict verdict-error", id: "verdict", text: "NOT CHECKED" }),
                         el("p", { class: "error-line", text: message }));
    $("result").hidden = false;
  }

  // -- the result ---------------------------------------------------------------------------------
  const numel = (shape) => (shape || []).reduce((a, b) => a * b, 1);
  const caseSize = (c) => Object.values(c.inputs || {}).reduce((s, i) => s + numel(i && i.shape), 0);
  // JSON has no NaN or infinity: the report writes them as the strings "nan", "inf" and "-inf"
  // (docs/formats.md); they are shown as NumPy prints them, not as quoted strings
  const NON_FINITE = new Set(["nan", "inf", "-inf"]);
  const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6))))
    : (typeof v === "string" && NON_FINITE.has(v)) ? v : JSON.stringify(v));
  // an array of the report as NumPy prints one: 6 significant digits, one row per line
  function fmtArray(v, indent) {
    indent = indent || "";
    if (!Array.isArray(v)) return fmt(v);
    if (!v.some(Array.isArray)) return "[" + v.map(fmt).join(", ") + "]";
    return "[" + v.map((row, i) => (i ? indent + " " : "") + fmtArray(row, indent + " ")).join(",\n") + "]";
  }

  function renderReport(report, attempt, seconds) {
    const body = $("result-body");
    const parts = [];
    const verdict = report.failure ? "ERROR" : (report.passed ? "PASS" : "FAIL");
    parts.push(el("p", { class: "verdict verdict-" + verdict.toLowerCase(), id: "verdict", text: verdict }));
    const counts = report.counts || {};
    const summary = el("p", { class: "score" },
      el("strong", { text: "Score " + fmt(report.score) + " / " + fmt(report.max_score) }),
      " · " + (counts.passed || 0) + " of " + (counts.total || 0) +
      ((report.hidden || []).length ? " shown" : "") + " cases passed");
    if (seconds) summary.append(" · " + seconds + " s");
    parts.push(summary);
    if (counts.skipped) {
      parts.push(el("p", { class: "muted", text: counts.skipped + " case" + (counts.skipped > 1 ? "s were" : " was") +
        " not run: the check stopped at the first call that timed out, crashed or ran out of time" }));
    }
    for (const h of report.hidden || []) {
      parts.push(el("p", { class: "muted", text: "Hidden group " + h.group + ": " + h.passed + " of " + h.total + " passed" }));
    }
    if (report.failure) {
      parts.push(el("p", { class: "error-line", text: report.failure.message || report.failure.kind }));
      if (report.failure.hint) parts.push(el("p", { class: "hint", text: "Hint: " + report.failure.hint }));
      for (const d of shownDetails(report.failure)) parts.push(el("pre", { class: "details", text: d }));
    }
    if ((report.hints || []).length) {
      const list = el("ul", { class: "hints" });
      for (const h of report.hints) list.append(el("li", { text: h }));
      parts.push(el("h3", { text: "What to fix" }), list);
    }
    // a call stopped at its limit is a failing case too (it names the case and the limit)
    const failing = (report.cases || []).filter((c) => c.status === "failed" || c.status === "error" || c.status === "timeout")
      .sort((a, b) => caseSize(a) - caseSize(b) || a.name.localeCompare(b.name));
    if (failing.length) {
      // the count of graded cases, as the score line's; inputs hypothesis found are counted apart
      const found = failing.filter((c) => c.shrunk).length;
      parts.push(el("h3", { text: "Failing cases, smallest first (" + (failing.length - found) +
        (found ? ", and " + found + " smaller input" + (found > 1 ? "s" : "") + " found by hypothesis" : "") + ")" }));
      // the three smallest, and the smallest of each other kind of failure (a tolerance
      // failure's heat map among them), in size order; the rest folded
      // (one dtype of each: basis[float16] and basis[float32] fail alike)
      const base = (c) => c.name.replace(/\[[^\]]*\]$/, "");
      const kinds = new Set(), bases = new Set();
      const first = failing.filter((c) => {
        const kind = (c.failure || {}).kind;
        if (bases.has(base(c)) || (bases.size >= 3 && kinds.has(kind))) return false;
        kinds.add(kind);
        bases.add(base(c));
        return true;
      });
      const rest = failing.filter((c) => !first.includes(c));
      // heat maps for the cases shown first only: each is a picture the server draws
      for (const c of first) parts.push(renderCase(c, attempt));
      if (rest.length) {
        const more = el("details", { class: "more" }, el("summary", { text: "The other " + rest.length + " failing cases" }));
        for (const c of rest.slice(0, 50)) more.append(renderCase(c, null));
        parts.push(more);
      }
    }
    const out = report.output || {};
    if (out.withheld) parts.push(el("h3", { text: "Your printed output" }), el("p", { class: "muted", text: "Withheld: " + out.withheld }));
    else if (out.stdout || out.stderr) {
      parts.push(el("h3", { text: "Your printed output" }));
      if (out.stdout) parts.push(el("pre", { class: "output", "aria-label": "standard output", text: out.stdout }));
      if (out.stderr) parts.push(el("pre", { class: "output", "aria-label": "standard error", text: out.stderr }));
      if (out.truncated) parts.push(el("p", { class: "muted", text: "(cut: only the start is kept)" }));
    }
    body.replaceChildren(...parts);
    $("result").hidden = false;
    $("status").textContent = verdict + ": score " + fmt(report.score) + " of " + fmt(report.max_score);
  }

  function shapes(c) {
    return Object.entries(c.inputs || {}).map(([k, v]) => k + " " + (v && v.shape ? "(" + v.shape.join(", ") + ")" : "") + " " + ((v && v.dtype) || "")).join(", ");
  }

  function renderCase(c, attempt) {
    const f = c.failure || {};
    const box = el("article", { class: "case" });
    box.append(el("h4", { text: c.name }),
               el("p", { class: "muted", text: "group " + c.group + (c.dtype ? " · " + c.dtype : "") + " · inputs: " + shapes(c) }),
               el("p", { class: "kind" }, el("strong", { text: f.kind + ": " }), f.message || ""));
    if (f.hint) box.append(el("p", { class: "hint", text: "Hint: " + f.hint }));
    const d = f.data || {};
    const rows = [];
    const v = c.values || {};
    // the failing input itself, when the report has its values (small cases; a newcomer could
    // not tell which IDs or which mask a case was called with)
    for (const name of Object.keys(c.inputs || {})) if (name in v) rows.push([name, fmtArray(v[name])]);
    if ("expected" in v) rows.push(["expected", fmtArray(v.expected)]);
    if ("got" in v) rows.push(["got", fmtArray(v.got)]);
    if ("expected" in d && !("expected" in v)) rows.push(["expected", fmt(d.expected) + (d.worst_index ? " at " + JSON.stringify(d.worst_index) : "")]);
    if ("got" in d && !("got" in v)) rows.push(["got", fmt(d.got)]);
    if ("allowed" in d) rows.push(["tolerance", "error " + fmt(d.error) + ", allowed " + fmt(d.allowed) + (d.ratio ? " (" + fmt(d.ratio) + "× the allowance)" : "")]);
    if (rows.length) {
      const dl = el("dl", { class: "values" });
      for (const [k, text] of rows) dl.append(el("dt", { text: k }), el("dd", {}, el("pre", { text: text })));
      box.append(dl);
    }
    for (const line of shownDetails(f)) box.append(el("pre", { class: "details", text: line }));
    // only where the server can draw one (heat_map_png: the values, or a tolerance grid)
    if (f.kind === "tolerance" && attempt && ((("got" in v) && ("expected" in v)) || d.grid)) {
      const img = el("img", { class: "heatmap", alt: "Heat map of where " + c.name + " is off: |got - expected| over the output",
                              src: "/api/attempts/" + attempt + "/heatmap?case=" + encodeURIComponent(c.name) + "&token=" + encodeURIComponent(config.token) });
      img.addEventListener("error", () => img.remove());
      box.append(img);
    }
    return box;
  }

  // -- history ------------------------------------------------------------------------------------
  async function loadHistory() {
    let rows = [];
    try { rows = await (await api("/api/history?problem=" + encodeURIComponent(config.problem))).json(); } catch (e) { return; }
    const list = $("history");
    list.replaceChildren();
    $("history-empty").hidden = rows.length > 0;
    for (const row of rows) {
      const when = new Date(row.time * 1000).toLocaleString();
      const label = (row.failure ? "ERROR" : (row.passed ? "PASS" : "FAIL")) + " · " + (names[row.framework] || row.framework) + " · " +
                    fmt(row.score) + "/" + fmt(row.max_score) + " · " + when;
      const button = el("button", { type: "button", class: "link", text: label,
                                    "aria-label": "Show attempt " + row.id + ": " + label });
      button.addEventListener("click", () => showAttempt(row.id));
      list.append(el("li", { class: row.passed ? "pass" : "fail" }, button));
    }
  }

  async function showAttempt(id) {
    const attempt = await (await api("/api/attempts/" + id)).json();
    if (attempt.framework !== framework) {
      const radio = document.querySelector('input[name="framework"][value="' + attempt.framework + '"]');
      if (radio) { saveDraft(); radio.checked = true; framework = attempt.framework; relabel(); }
    }
    editor.set(attempt.source);
    renderReport(attempt.report, attempt.id, attempt.seconds ? attempt.seconds.toFixed(2) : "");
    $("result").focus();
  }

  loadHistory();
})();
