"""The billing API simulator (pure WSGI, no Django): see app.py."""

from bot.billing.simulator.app import BillingSimulator, SimulatedReset, SimulatedTimeout, parse_fault
from bot.billing.simulator.data import DEFAULT_SEED, SCENARIOS, build_dataset
from bot.billing.simulator.server import serve_in_thread

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
