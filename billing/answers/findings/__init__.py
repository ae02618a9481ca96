"""What billing records say, computed: typed findings with their derivations and no language.

Pure Python, `Decimal` only, one currency at a time (`Money` raises `CurrencyMismatch` when USD
and VES meet). Each `find_*` function reads API records and returns findings: dataclasses holding
the amounts (two-place Decimals in the finding's `currency`), dates, counts and the formula that
produced them (`*_derivation`, language-neutral, for analysts). Wording is someone else's job
(billing/answers/wording.py renders a finding through a language's phrase table into evidence facts).

A finding that answers a question about a change or a problem declares the figures an answer must
state (`figures()`), each naming the kind of evidence fact that states it;
billing/answers/key_figures.py decides which of them are primary for a capability. Dates are injected (`today`), never read from the clock.

One module per topic, each on `base.py` (`Finding`, `Cause`, `Figure`, the machine notation):
- `account.py` — read from the system of record: the customer, a credit note, the plan, one-off charges;
- `totals.py` — an invoice's total and the month-over-month change by line type;
- `invoice_checks.py` — duplicated charges, taxes and a tax-rate change, outage credits;
- `promotions.py` — active and ended promotions;
- `proration.py` — a plan change in the middle of a cycle;
- `payments.py` — payments against the total, payment attempts, due dates, late fees.
"""
