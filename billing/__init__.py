"""Billing capability: the contract (openapi.yaml), its simulator, the client and the computations.

The evidence pipeline (records, findings, key_figures, phrases, wording, evidence, computations),
the breaker and the simulator app import nothing from Django at module level. Django lives in the
app's own pieces (apps, models, migrations, the billing_call command), the simulator's thin adapter
(`simulator/views.py`, `simulator/urls.py`), and lazy reads in the client factory and the breaker's
database store.
"""
