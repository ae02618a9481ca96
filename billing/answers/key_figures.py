"""Which declared figures an answer must state, per question a capability answers. Pure, no Django.

Findings declare their figures (findings/); these rules give each finding of a capability a role:
- a bill change: the delta is primary; of the causes inside it (duplicate charge, late fee,
  proration, promotion ended, tax-rate change, outage credit, one-off charge) the one that moves
  the bill most is primary with all its figures, the others secondary;
- payment status: the most recent invoice's latest attempt (amount and date) and, when it is not
  settled, what is still due and when (if the capability states the due date) are primary; failed
  attempts and older unpaid invoices are secondary.
Roles are positions in the capability's list of findings; computations.py turns them into
`KeyFigure`s that point at the facts stating them.
"""

from __future__ import annotations

from collections.abc import Sequence

from billing.answers.evidence import PRIMARY, SECONDARY
from billing.answers.findings.account import Charge
from billing.answers.findings.base import Cause, Finding
from billing.answers.findings.invoice_checks import OutageCredit
from billing.answers.findings.payments import DueStatus, PaymentAttempt, PaymentsVsTotal
from billing.answers.findings.totals import InvoiceDelta


def change_roles(findings: Sequence[Finding]) -> dict[int, str]:
    """Return {position: role} for "why is my bill different": the delta and its largest cause first.

    A line a recomputation already explains (an outage credit line) is not a second cause. Ties go
    to the cause stated first.
    """
    roles = {
        position: PRIMARY for position, finding in enumerate(findings) if isinstance(finding, InvoiceDelta)
    }
    explained = {finding.line_id for finding in findings if isinstance(finding, OutageCredit)}
    causes = [
        position
        for position, finding in enumerate(findings)
        if isinstance(finding, Cause) and not (isinstance(finding, Charge) and finding.line_id in explained)
    ]
    if causes:
        largest = max(causes, key=lambda position: abs(findings[position].effect))
        roles.update({position: PRIMARY if position == largest else SECONDARY for position in causes})
    return roles


def payment_roles(findings: Sequence[Finding]) -> dict[int, str]:
    """Return {position: role} for "did my payment arrive / what do I owe".

    Each `PaymentsVsTotal` opens an invoice's group (its attempts follow it, oldest first); the
    first group is the most recent invoice. Its latest attempt and what it still owes are primary;
    elsewhere only problems count: failed attempts and older invoices left unpaid (secondary).
    A due status (the current invoice's due date) is primary.
    """
    roles: dict[int, str] = {}
    latest_attempt: dict[int, int] = {}
    group = -1
    for position, finding in enumerate(findings):
        if isinstance(finding, PaymentsVsTotal):  # declares its balance only when one is left
            group += 1
            roles[position] = PRIMARY if group == 0 else SECONDARY
        elif isinstance(finding, PaymentAttempt):
            latest_attempt[group] = position
            if not finding.succeeded:
                roles[position] = SECONDARY
        elif isinstance(finding, DueStatus):
            roles[position] = PRIMARY
    if 0 in latest_attempt:
        roles[latest_attempt[0]] = PRIMARY
    return roles
