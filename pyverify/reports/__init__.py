"""Reports: the audit (the main job), Markdown/HTML reports, charts and the wording guard.

:mod:`pyverify.reports.audit` sits above the command layer: commands call it,
it never imports :mod:`pyverify.commands`.
"""
