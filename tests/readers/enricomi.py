"""What EnricoMi/publish-unit-test-result-action makes of a JUnit file: its own parse and
annotation functions (publish.junit, publish.unittestresults, publish), imported from the
checked-out source's python/ folder; no code of the action is copied here.

    ENRICOMI_SRC/.venv/bin/python enricomi.py ENRICOMI_SRC JUNIT_XML [--report-individual-runs]
        [--dedup-classes-by-file-name] [--test-file-prefix P] [--suite-logs none|info|error|any]

The settings are the action's defaults (publish_test_results.get_settings): large_files and
ignore_runs false, time_unit seconds, no test_file_prefix, report_individual_runs false,
deduplicate_classes_by_file_name false, report_suite_logs none, check_run_annotations
"all tests, skipped tests". ``annotations`` are, in order, what Publisher.get_publish_data
collects (parse-error, case, suite-log, test-list annotations), each as Annotation.to_dict()
makes it for the API; the check run takes them in chunks of 50. It runs in $GITHUB_WORKSPACE
when set (the action globs from there). Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("junit")
    ap.add_argument("--report-individual-runs", action="store_true")
    ap.add_argument("--dedup-classes-by-file-name", action="store_true")
    ap.add_argument("--test-file-prefix", default=None)
    ap.add_argument("--suite-logs", default="none", choices=["none", "info", "error", "any"])
    a = ap.parse_args(argv)

    sys.path.insert(0, os.path.join(os.path.abspath(a.src), "python"))
    import publish
    from publish.junit import parse_junit_xml_files, process_junit_xml_elems
    from publish.unittestresults import get_test_results, get_stats

    junit = os.path.abspath(a.junit)
    if os.environ.get("GITHUB_WORKSPACE"):
        os.chdir(os.environ["GITHUB_WORKSPACE"])
    rel = os.path.relpath(junit)
    result_file = rel if not rel.startswith(os.pardir) else junit  # what the action's glob yields

    out_logs = a.suite_logs in ("info", "any")
    err_logs = a.suite_logs in ("error", "any")
    parsed = process_junit_xml_elems(parse_junit_xml_files([result_file], False, False),
                                     time_factor=1.0, test_file_prefix=a.test_file_prefix,
                                     add_suite_details=out_logs or err_logs).with_commit("0" * 40)
    results = get_test_results(parsed, a.dedup_classes_by_file_name)
    stats = get_stats(results)
    cases = results.case_results

    error_annotations = publish.get_error_annotations(stats.errors)
    case_annotations = publish.get_case_annotations(cases, a.report_individual_runs)
    suite_annotations = publish.get_suite_annotations(stats.suite_details, out_logs, err_logs)
    list_annotations = [x for x in publish.get_skipped_tests_list_annotation(cases) +
                        publish.get_all_tests_list_annotation(cases) if x]
    annotations = error_annotations + case_annotations + suite_annotations + list_annotations

    out = {
        "reader": "EnricoMi/publish-unit-test-result-action",
        "junit": result_file,
        "cwd": os.getcwd(),
        "parse_errors": [e.message for e in stats.errors],
        "stats": {k: getattr(stats, k) for k in ("files", "suites", "duration", "tests", "tests_succ", "tests_skip",
                                                  "tests_fail", "tests_error", "runs", "runs_succ", "runs_skip",
                                                  "runs_fail", "runs_error")},
        "short_summary": publish.get_short_summary(stats),
        "cases": [{"result_file": c.result_file, "test_file": c.test_file, "line": c.line,
                   "class_name": c.class_name, "test_name": c.test_name, "result": c.result,
                   "message": c.message, "time": c.time}
                  for c in parsed.cases if c.result in ("failure", "error")],
        "counts": {"error": len(error_annotations), "case": len(case_annotations),
                   "suite": len(suite_annotations), "test_list": len(list_annotations)},
        "annotations": [x.to_dict() for x in annotations],
    }
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
