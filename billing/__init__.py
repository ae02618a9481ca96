"""Billing capability: the contract (openapi.yaml), its simulator, the client and the computations.

Nothing in this package imports Django at module level, except the simulator's thin Django
adapter (`simulator/views.py`, `simulator/urls.py`) and the client factory's lazy settings read.
"""
