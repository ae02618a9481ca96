"""The analysts' pages, one module per subject: the trace browser, one turn's trace, review sessions, the
taxonomy, and the dashboard (its request, its sections, its views). traces/urls.py and traces/dashboard_urls.py
map the URLs onto them.
"""
