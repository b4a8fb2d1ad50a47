// What mikepenz/action-junit-report makes of a JUnit file: its parseTestReports, imported from
// its compiled lib/testParser.js (no code of the action is copied here).
//
//   node mikepenz.mjs MIKEPENZ_SRC JUNIT_XML [--annotations-limit N] [--no-truncate]
//
// The arguments are the action's defaults (action.yml and main.ts): include_passed false,
// annotate_notice false, check_retries false, exclude_sources ['/build/', '/__pycache__/'],
// no check_title_template, bread_crumb_delimiter '/', no test_files_prefix, no transformers,
// follow_symlink false, annotations_limit -1, truncate_stack_traces true, fail_on_parse_error
// false, resolve_ignore_classname false. It runs in $GITHUB_WORKSPACE when set (the action
// resolves paths against the working folder and that variable). `annotations` are those the
// action sends (notices dropped as annotate_notice is false); a check run created without
// update_check carries the first 50 of them. Prints one JSON object; the action's log lines
// (@actions/core writes them to stdout) go to stderr.
import path from 'node:path'
import {pathToFileURL} from 'node:url'

const realWrite = process.stdout.write.bind(process.stdout)
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest)

const args = process.argv.slice(2)
if (args.length < 2) {
  process.stderr.write('usage: node mikepenz.mjs MIKEPENZ_SRC JUNIT_XML [--annotations-limit N] [--no-truncate]\n')
  process.exit(2)
}
const [srcArg, junitArg] = args
const src = path.resolve(srcArg) // before any chdir
let annotationsLimit = -1
let truncate = true
for (let i = 2; i < args.length; i++) {
  if (args[i] === '--annotations-limit') annotationsLimit = parseInt(args[++i])
  else if (args[i] === '--no-truncate') truncate = false
  else throw new Error(`unknown argument ${args[i]}`)
}

const junitAbs = path.resolve(junitArg)
if (process.env.GITHUB_WORKSPACE) process.chdir(process.env.GITHUB_WORKSPACE)
const rel = path.relative(process.cwd(), junitAbs)
const reportPath = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : junitAbs

const {parseTestReports} = await import(pathToFileURL(path.join(src, 'lib', 'testParser.js')).href)
const result = await parseTestReports(
  'JUnit Test Report', // check_name
  '', // summary
  reportPath, // report_paths (a glob)
  '', // suite_regex
  false, // include_passed
  false, // annotate_notice
  false, // check_retries
  ['/build/', '/__pycache__/'], // exclude_sources
  undefined, // check_title_template
  '/', // bread_crumb_delimiter
  '', // test_files_prefix
  [], // transformers
  false, // follow_symlink
  annotationsLimit,
  truncate, // truncate_stack_traces
  false, // fail_on_parse_error
  false // resolve_ignore_classname
)

const sent = result.globalAnnotations.filter(a => a.annotation_level !== 'notice')
const suites = []
const walk = (r, depth) => {
  for (const t of r.testResults) {
    suites.push({name: t.name, depth, tests: t.totalCount, failed: t.failedCount, annotations: t.annotations.length})
    walk(t, depth + 1)
  }
}
walk(result, 0)
realWrite(
  JSON.stringify(
    {
      reader: 'mikepenz/action-junit-report',
      junit: reportPath,
      cwd: process.cwd(),
      found_files: result.foundFiles,
      totals: {tests: result.totalCount, passed: result.passed, failed: result.failed, skipped: result.skipped, retried: result.retried, time: result.time},
      suites,
      annotations_total: sent.length,
      annotations_in_check_run: Math.min(sent.length, 50),
      annotations: sent.map(a => ({
        path: a.path,
        start_line: a.start_line,
        end_line: a.end_line,
        annotation_level: a.annotation_level,
        title: a.title,
        message: a.message,
        raw_details: a.raw_details,
        time: a.time
      }))
    },
    null,
    1
  ) + '\n'
)
