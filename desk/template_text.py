"""WhatsApp message templates as text: their numbered variables, a body filled in, and the checks Meta makes.

Pure: no Django. A template body holds variables written `{{1}}`, `{{2}}`…; Meta numbers them from 1 with no
gap, and refuses a body that starts or ends with one. A value sent for a variable is plain text on one line:
Meta refuses new lines, tabs and more than four spaces in a row in a parameter (error 132018).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

VARIABLE = re.compile(r"\{\{\s*(\d+)\s*\}\}")
BODY_MAX = 1024  # Meta's limit for a template's body text
PARAMETER_MAX = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9_]{1,512}$")
BUTTON_TEXT_MAX = 25  # a quick-reply button's label
BUTTONS_MAX = 10


def template_variables(body: str) -> list[int]:
    """Return the variable numbers the body uses, in ascending order, each once."""
    return sorted({int(number) for number in VARIABLE.findall(body or "")})


def body_problem(body: str) -> str:
    """Return why Meta would refuse this body ('' when it would not)."""
    text = (body or "").strip()
    if not text:
        return "Write the body of the template."
    if len(text) > BODY_MAX:
        return f"A template's body has at most {BODY_MAX:,} characters; this one has {len(text):,}."
    numbers = template_variables(text)
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        expected = ", ".join(f"{{{{{n}}}}}" for n in range(1, len(numbers) + 1))
        return f"Number the variables from 1 with no gap ({expected}); this body uses " \
               + ", ".join(f"{{{{{n}}}}}" for n in numbers) + "."
    if VARIABLE.match(text) or re.search(r"\{\{\s*\d+\s*\}\}$", text):
        return "WhatsApp refuses a template that starts or ends with a variable: add words before or after it."
    return ""


def buttons_problem(buttons: Sequence[str]) -> str:
    """Return why Meta would refuse these quick-reply button labels ('' when it would not)."""
    if len(buttons) > BUTTONS_MAX:
        return f"A template has at most {BUTTONS_MAX} quick-reply buttons; this one has {len(buttons)}."
    for label in buttons:
        if len(label) > BUTTON_TEXT_MAX:
            return f"A button's text has at most {BUTTON_TEXT_MAX} characters: “{label}” has {len(label)}."
    if len(set(buttons)) != len(buttons):
        return "Two buttons have the same text."
    return ""


def parameter_problem(number: int, value: str) -> str:
    """Return why Meta would refuse this value for variable `number` ('' when it would not)."""
    if not value.strip():
        return f"Fill in {{{{{number}}}}}."
    if "\n" in value or "\r" in value or "\t" in value:
        return f"{{{{{number}}}}} must be on one line: WhatsApp refuses new lines and tabs in a variable."
    if "     " in value:
        return f"{{{{{number}}}}} has more than four spaces in a row, which WhatsApp refuses."
    if len(value) > PARAMETER_MAX:
        return f"{{{{{number}}}}} has at most {PARAMETER_MAX:,} characters."
    return ""


def template_render(body: str, values: Mapping[int, str]) -> str:
    """Return the body with each variable replaced by its value; a variable without one stays as written."""
    def fill(match: re.Match) -> str:
        value = values.get(int(match.group(1)), "")
        return value if value.strip() else match.group(0)

    return VARIABLE.sub(fill, body or "")


def language_matches(template_language: str, customer_language: str) -> bool:
    """Whether a template in Meta's language code (`es`, `es_MX`, `en_US`) speaks the customer's language."""
    template_language, customer_language = template_language.lower(), customer_language.lower()
    return template_language == customer_language or template_language.split("_")[0] == customer_language
