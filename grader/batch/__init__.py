"""Grade a whole class: ``grader grade`` (parallel, resumable, sharded) and ``grader merge``.

The modules, each importing only those above it (and nothing of ``grader.cli``):

``discovery``  which files are submissions: the learners under the paths given, each learner's
               file chosen within a budget, learner ids, shards (``discover``, ``in_shard``).
``gradebook``  the output folder's ``gradebook.csv`` and ``reports/<name>.json``: ``Row``,
               ``read_gradebook``/``write_gradebook``, report names and paths, ``load_report``,
               ``report_from_json``, placeholder reports.
``settings``   its ``settings.json``: the settings that decide the grades, compared by
               ``grade --resume`` and ``merge``.
``outputs``    its ``junit.xml``, ``summary.md`` (``grader.reports.summary_md``), ``summary.html``
               (``grader.reports.classview``) and ``feedback/``, rewritten when a run ends.
``pool``       ``grader grade``: each submission checked in a process of its own, a pool of
               them at a time, rows appended as they come, progress.
``merge``      ``grader merge``: the shards' folders joined into one.

Nothing is re-exported here: import a name from the module that holds it
(``from grader.batch.discovery import discover``).
"""
