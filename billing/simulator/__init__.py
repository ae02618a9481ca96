"""The billing API simulator (pure WSGI, no Django): see app.py."""

from billing.simulator.app import BillingSimulator, SimulatedReset, SimulatedTimeout, parse_fault
from billing.simulator.data import DEFAULT_SEED, SCENARIOS, build_dataset
from billing.simulator.server import serve_in_thread

__all__ = [
    "DEFAULT_SEED",
    "SCENARIOS",
    "BillingSimulator",
    "SimulatedReset",
    "SimulatedTimeout",
    "build_dataset",
    "parse_fault",
    "serve_in_thread",
]
