#!/usr/bin/env sh
# Rebuild grader/web/static/editor.js (CodeMirror 6 and its Python mode, one minified file) and
# its licence file from the npm registry. A development step, not run by CI: the built file is
# committed. Needs node and npm; node_modules/ stays here (git ignores it).
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
OUT=../../grader/web/static
npx esbuild entry.js --bundle --minify --format=iife --legal-comments=none --target=es2019 --outfile="$OUT/editor.js"
# the licences of every bundled package (all MIT), in one file beside the bundle
node licenses.js > "$OUT/editor.LICENSE.txt"
echo "built $OUT/editor.js ($(wc -c < "$OUT/editor.js") bytes)"
