"""Whom a document or a section applies to, and whether it applies to a customer. Pure: no Django.

A knowledge-base document states a policy; some policies hold for one kind of customer only (the late fee
of a home account is 5 %, a business account's a flat USD 3,00). The front matter says so:

    segment: home                # home | business — absent: every customer
    plans: [fibra]               # plan codes (F100, E500…) or plan types (fibra, empresarial, hogar-basico)
    term: annual                 # monthly | annual | trial — absent: any

and a section may narrow it on its heading: `## Calendario para cuentas empresariales {segment=business}`.
The vocabulary is billing's: its customers carry a segment (home, business), a plan code and, when billing
reports it, a contract term; the plan codes and names below are the billing simulator's catalogue and the terms
billing's (cross-room tests hold them equal). `term` is there for the documents whose rules hold on the annual
or the trial plan only, and counts only when the caller knows the customer's term.

Matching keeps what it cannot rule out ("when in doubt, keep"): a document with no audience applies to
everyone, and a dimension the customer's profile does not know never excludes.
"""

from __future__ import annotations

from dataclasses import dataclass

SEGMENTS = ("home", "business")
TERMS = ("monthly", "annual", "trial")
# code → (billing's plan name, segment): billing/simulator/data.py PLANS
PLAN_CODES = {
    "HB30": ("Hogar Básico", "home"),
    "F100": ("Fibra 100", "home"),
    "F300": ("Fibra 300", "home"),
    "F600": ("Fibra 600", "home"),
    "F1000": ("Fibra 1000", "home"),
    "E500": ("Empresarial 500", "business"),
    "E1000": ("Empresarial 1000", "business"),
}
# plan type → its codes (the names billing gives its plans start with the type)
PLAN_TYPES = {
    "hogar-basico": ("HB30",),
    "fibra": ("F100", "F300", "F600", "F1000"),
    "empresarial": ("E500", "E1000"),
}
ATTRIBUTES = ("segment", "plans", "term")

SEGMENT_LABELS = {"home": "Home customers", "business": "Business customers"}
PLAN_TYPE_LABELS = {"hogar-basico": "Hogar Básico", "fibra": "Fibra plans", "empresarial": "Empresarial plans"}
TERM_LABELS = {"monthly": "Monthly plan", "annual": "Annual plan", "trial": "Trial plan"}


class AudienceError(ValueError):
    """A segment, plan or term outside the vocabulary, or a section that contradicts its document.

    `field` names the attribute at fault, so the parser can point at its line.
    """

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Audience:
    """Whom a document or section applies to; every part empty means everyone."""

    segment: str = ""
    plans: tuple[str, ...] = ()  # plan codes and plan types, as written (normalised)
    term: str = ""

    def __bool__(self) -> bool:
        return bool(self.segment or self.plans or self.term)

    def plan_codes(self) -> frozenset[str]:
        """Return the plan codes this audience names, plan types expanded (empty: any plan)."""
        return frozenset(code for plan in self.plans for code in PLAN_TYPES.get(plan, (plan,)))

    def segments(self) -> frozenset[str]:
        """Return the segments this audience covers: its own, or those its plans belong to (empty: any)."""
        if self.segment:
            return frozenset({self.segment})
        return frozenset(PLAN_CODES[code][1] for code in self.plan_codes())

    def narrowed(self, section: Audience) -> Audience:
        """Return this (a document's) audience narrowed by a section's own; refuse a section outside it."""
        if section.segment and self.segment and section.segment != self.segment:
            raise AudienceError("segment", f"segment {section.segment} contradicts the document's ({self.segment})")
        if section.term and self.term and section.term != self.term:
            raise AudienceError("term", f"term {section.term} contradicts the document's ({self.term})")
        if section.plans and self.plans and not section.plan_codes() <= self.plan_codes():
            outside = sorted(section.plan_codes() - self.plan_codes())
            raise AudienceError("plans", f"{_plans_are(outside)} outside the document's ({', '.join(self.plans)})")
        return audience(segment=section.segment or self.segment, plans=list(section.plans or self.plans),
                        term=section.term or self.term)

    def excludes(self, customer: Applicability | None) -> str:
        """Return why this audience does not apply to the customer ("" when it applies, or cannot be ruled out)."""
        if customer is None or not self:
            return ""
        segment = customer.segment or (PLAN_CODES[customer.plan][1] if customer.plan in PLAN_CODES else "")
        if segment and self.segments() and segment not in self.segments():
            return "for " + " and ".join(SEGMENT_LABELS[s].lower() for s in sorted(self.segments()))
        # A plan code the vocabulary does not know may belong to a plan type named here: keep.
        if customer.plan in PLAN_CODES and self.plans and customer.plan not in self.plan_codes():
            return "for " + describe_plans(self.plans)
        if customer.term and self.term and customer.term != self.term:
            return "for the " + TERM_LABELS[self.term].lower()
        return ""

    def attributes(self) -> str:
        """Return the heading attributes that say this audience (`segment=home plans=F100,F300`), or ""."""
        parts = [f"segment={self.segment}"] if self.segment else []
        parts += [f"plans={','.join(self.plans)}"] if self.plans else []
        parts += [f"term={self.term}"] if self.term else []
        return " ".join(parts)

    def labels(self) -> list[str]:
        """Return human labels of this audience ("Home customers", "Fibra 100", "Annual plan"); [] for everyone."""
        shown = [SEGMENT_LABELS[self.segment]] if self.segment else []
        shown += [PLAN_TYPE_LABELS.get(plan) or PLAN_CODES[plan][0] for plan in self.plans]
        return shown + ([TERM_LABELS[self.term]] if self.term else [])


@dataclass(frozen=True)
class Applicability:
    """What retrieval knows of the customer: billing's segment and plan code, and a contract term when known.

    An empty part is unknown and never excludes a document.
    """

    segment: str = ""
    plan: str = ""
    term: str = ""

    def __post_init__(self):
        if self.segment and self.segment not in SEGMENTS:
            raise ValueError(f"segment must be one of {', '.join(SEGMENTS)} (got {self.segment!r})")
        if self.term and self.term not in TERMS:
            raise ValueError(f"term must be one of {', '.join(TERMS)} (got {self.term!r})")
        object.__setattr__(self, "plan", (self.plan or "").strip().upper())

    def __bool__(self) -> bool:
        return bool(self.segment or self.plan or self.term)


def describe_plans(plans) -> str:
    """Return plans for a person to read: "Fibra plans", "Fibra 100 and Fibra 300"."""
    names = [PLAN_TYPE_LABELS.get(plan) or PLAN_CODES.get(plan, (plan,))[0] for plan in plans]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def audience(*, segment=None, plans=None, term=None) -> Audience:
    """Return the Audience front matter or heading attributes describe; raise AudienceError naming the field.

    `plans` is a list or a comma-separated string of plan codes (any case) and plan types.
    """
    segment = _word(segment, "segment")
    if segment and segment not in SEGMENTS:
        raise AudienceError("segment", f"segment must be one of {', '.join(SEGMENTS)} (got {segment!r})")
    term = _word(term, "term")
    if term and term not in TERMS:
        raise AudienceError("term", f"term must be one of {', '.join(TERMS)} (got {term!r})")
    if isinstance(plans, str):
        plans = [part for part in plans.split(",") if part.strip()]
    if plans is not None and not isinstance(plans, list):
        raise AudienceError("plans", "plans must be a list of plan codes or plan types")
    normalised = []
    for plan in plans or []:
        if not isinstance(plan, (str, int)):
            raise AudienceError("plans", "plans must be a list of plan codes or plan types")
        word = str(plan).strip()
        if word.lower() in PLAN_TYPES:
            normalised.append(word.lower())
        elif word.upper() in PLAN_CODES:
            normalised.append(word.upper())
        else:
            raise AudienceError("plans", f"plan {word!r} is neither a plan code ({', '.join(PLAN_CODES)}) "
                                         f"nor a plan type ({', '.join(PLAN_TYPES)})")
    result = Audience(segment=segment, plans=tuple(dict.fromkeys(normalised)), term=term)
    if segment and result.plans:
        others = sorted(code for code in result.plan_codes() if PLAN_CODES[code][1] != segment)
        if others:
            kind = f"a {segment} plan" if len(others) == 1 else f"{segment} plans"
            raise AudienceError("plans", f"{_plans_are(others)} not {kind} (segment: {segment})")
    return result


def _plans_are(codes: list[str]) -> str:
    return f"plan {codes[0]} is" if len(codes) == 1 else f"plans {', '.join(codes)} are"


def _word(value, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AudienceError(field, f"{field} must be one word (got {value!r})")
    return value.strip().lower()


def parse_attributes(text: str) -> Audience:
    """Return the Audience of heading attributes such as `segment=business plans=E500,E1000 term=annual`."""
    values: dict[str, str] = {}
    for token in text.replace(";", " ").split():
        key, separator, value = token.partition("=")
        key = key.strip().lower()
        if not separator or key not in ATTRIBUTES:
            raise AudienceError(key or token, f"unknown heading attribute {token!r} (use {', '.join(ATTRIBUTES)})")
        if key in values:
            raise AudienceError(key, f"{key} is given twice")
        values[key] = value
    return audience(**values)
