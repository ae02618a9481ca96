"""The evals pages, one module per subject (analysts and supervisors; the KB panels for KB editors).

`golden_sets` (the sets, their gates, runs, variants and review), `golden_cases` (a case from a trace, its edit
form, the trace browser's bulk add), `runs` (the runs list with plots, a run, two runs compared),
`human_labels` (the label forms and the trace page's evals panels), `calibration` (the judge against human
labels), `kb_panels` (usage in traces, golden cases and "open in KB" on the KB's pages), `affected` (re-run a
document's golden cases) and `verifier` (the verifier playground). `summaries` holds what the run pages show
of a run. Views check the permission (evals/access.py), call one function and render.
"""
