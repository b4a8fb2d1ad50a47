// The editor of the exercise page (grader/web): CodeMirror 6 with Python highlighting,
// bundled by build.sh into grader/web/static/editor.js (one file, no CDN).
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Prec } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

/**
 * Make an editor in `parent` holding `doc`. `onRun` is called on Ctrl-Enter / Cmd-Enter.
 * `label` is the accessible name of the text area. Returns {get, set, focus}.
 * Tab indents; Escape then Tab leaves the editor (CodeMirror's keyboard escape hatch).
 */
function createEditor(parent, doc, onRun, label) {
  const runKeys = Prec.highest(keymap.of([
    { key: "Mod-Enter", run: () => { onRun(); return true; } },
  ]));
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        runKeys,
        basicSetup,
        keymap.of([indentWithTab]),
        indentUnit.of("    "),
        python(),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    }),
  });
  return {
    get: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
    view,
  };
}

window.GraderEditor = { createEditor };
