"""The billing answer side: from the system of record's records to the evidence an answer cites. Pure, no Django.

Arithmetic first, wording after; each step knows nothing of the next:
- `findings/` — the arithmetic, one module per topic: records in, typed findings out (amounts, dates,
  derivations), no language;
- `key_figures.py` — which figures of those findings an answer to a capability's question must state;
- `phrases.py` — per-language phrase tables (es, en), and `money.py` for the notation of numbers;
- `wording.py` — one finding → its evidence facts through a phrase table;
- `evidence.py` — what a capability hands to the turn: facts, key figures, `ToolResult`;
- `computations.py` — composes them into each capability's fact sheet.
"""
