// What dorny/test-reporter makes of a JUnit file: its own parser classes and getAnnotations /
// getReport, imported from its compiled lib/ (no code of the action is copied here).
//
//   node dorny.mjs DORNY_SRC JUNIT_XML [--parser java-junit|python-xunit|phpunit-junit]...
//                  [--max-annotations N] [--tracked LISTFILE] [--summary]
//
// As the action does: the working folder is $GITHUB_WORKSPACE when set (else the current one),
// workDir is that folder with a trailing '/', the tracked files are `git ls-files` there (the
// action's LocalFileProvider.listTrackedFiles; [] when it is not a git work tree) unless
// --tracked names a file with one path a line; the report's path is the JUnit file relative to
// the working folder (what the action's glob yields); max-annotations defaults to the action's
// 10. The check-run mode (use-actions-summary: false) renders the report before the annotations,
// which sorts the results; this does the same. Prints one JSON object; the action's own log
// lines (@actions/core writes them to stdout) go to stderr.
import fs from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

const realWrite = process.stdout.write.bind(process.stdout)
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest)

const args = process.argv.slice(2)
if (args.length < 2) {
  process.stderr.write('usage: node dorny.mjs DORNY_SRC JUNIT_XML [--parser NAME]... [--max-annotations N] [--tracked FILE] [--summary]\n')
  process.exit(2)
}
const [srcArg, junitArg] = args
const src = path.resolve(srcArg) // before any chdir
const parsers = []
let maxAnnotations = 10
let trackedList = null
let withSummary = false
for (let i = 2; i < args.length; i++) {
  if (args[i] === '--parser') parsers.push(args[++i])
  else if (args[i] === '--max-annotations') maxAnnotations = parseInt(args[++i])
  else if (args[i] === '--tracked') trackedList = args[++i]
  else if (args[i] === '--summary') withSummary = true
  else throw new Error(`unknown argument ${args[i]}`)
}
if (parsers.length === 0) parsers.push('java-junit', 'python-xunit', 'phpunit-junit')

const lib = p => import(pathToFileURL(path.join(src, 'lib', p)).href)
const CLASSES = {
  'java-junit': ['parsers/java-junit/java-junit-parser.js', 'JavaJunitParser'],
  'python-xunit': ['parsers/python-xunit/python-xunit-parser.js', 'PythonXunitParser'],
  'phpunit-junit': ['parsers/phpunit-junit/phpunit-junit-parser.js', 'PhpunitJunitParser']
}

const junitAbs = path.resolve(junitArg)
const workspace = process.env.GITHUB_WORKSPACE
if (workspace) process.chdir(workspace)
const cwd = process.cwd()
const rel = path.relative(cwd, junitAbs)
const reportPath = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : junitArg

const {LocalFileProvider} = await lib('input-providers/local-file-provider.js')
const {normalizeDirPath} = await lib('utils/path-utils.js')
const {getAnnotations} = await lib('report/get-annotations.js')
const {getReport, DEFAULT_OPTIONS} = await lib('report/get-report.js')

let trackedFiles
let trackedSource
if (trackedList) {
  trackedFiles = fs.readFileSync(trackedList, 'utf8').split(/\r?\n/).filter(s => s.length > 0)
  trackedSource = trackedList
} else {
  try {
    trackedFiles = await new LocalFileProvider('glue', [reportPath]).listTrackedFiles()
    trackedSource = 'git ls-files'
  } catch (e) {
    trackedFiles = []
    trackedSource = `none (git ls-files failed: ${String(e).split('\n')[0]})`
  }
}
const options = {workDir: normalizeDirPath(cwd, true), trackedFiles, parseErrors: maxAnnotations > 0}
const content = fs.readFileSync(junitAbs, 'utf8')

const out = {
  reader: 'dorny/test-reporter',
  junit: reportPath,
  cwd,
  tracked_files: trackedFiles.length,
  tracked_source: trackedSource,
  max_annotations: maxAnnotations,
  parsers: {}
}
for (const name of parsers) {
  const [file, cls] = CLASSES[name]
  const Parser = (await lib(file))[cls]
  const result = await new Parser(options).parse(reportPath, content)
  const failed = []
  for (const ts of result.suites)
    for (const tg of ts.groups)
      for (const tc of tg.tests)
        if (tc.result === 'failed')
          failed.push({
            suite: ts.name,
            group: tg.name,
            name: tc.name,
            time_ms: tc.time,
            message: tc.error?.message ?? null,
            path: tc.error?.path ?? null,
            line: tc.error?.line ?? null,
            details_first_line: tc.error?.details?.split(/\r?\n/)[0] ?? null
          })
  const checkReport = getReport([result], {...DEFAULT_OPTIONS, useActionsSummary: false})
  const annotations = getAnnotations([result], maxAnnotations)
  const entry = {
    totals: {tests: result.tests, passed: result.passed, failed: result.failed, skipped: result.skipped, time_ms: result.time},
    suites: result.suites.map(s => ({name: s.name, groups: s.groups.map(g => g.name), tests: s.tests})),
    failed,
    annotations
  }
  if (withSummary) {
    entry.check_report = checkReport
    entry.actions_summary = getReport([result], {...DEFAULT_OPTIONS, useActionsSummary: true})
  }
  out.parsers[name] = entry
}
realWrite(JSON.stringify(out, null, 1) + '\n')
