"""Verdicts per second of bot.grounding.verify on typical turns, against a naive baseline in the same run.

Typical turn: a 3-sentence answer (amounts, an account number, a due date, citations) and 10
evidence items (billing facts with values and knowledge-base chunks). The baseline is the check
the issue calls too weak: every digit run of the answer searched with digit boundaries in the
joined evidence text. Run: .venv/bin/python bench/grounding.py [--seconds 2]
"""

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.grounding import Evidence, strip_citations, verify  # noqa: E402

TRANSFER = "Los pagos por transferencia se reflejan en 24 a 48 horas hábiles."
CHUNKS = [
    "Las facturas vencen el día 15 de cada mes. El recargo por mora es de 5% sobre el saldo vencido.",
    "Si cambia de plan a mitad de ciclo, la diferencia se prorratea en la próxima factura.",
    TRANSFER,
    "The reconnection fee is USD 10,00 and is billed on the next invoice.",
    "El IVA aplicado es 16% sobre el monto base del plan.",
    "Plans: Fibra 100 at USD 25,00 per month, Fibra 300 at USD 35,00 per month.",
]


def make_turn(rng: random.Random) -> tuple[str, list[Evidence]]:
    """Return one typical answer and its 10 evidence items."""
    evidence = []
    amounts = []
    for n in range(1, 5):
        cents = rng.randint(1_000, 250_000)
        amount = f"{cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
        amounts.append(amount)
        evidence.append(Evidence(
            f"E{n}", f"Factura F-{1000 + n} del período 2024-0{n}-01 al 2024-0{n}-28: monto Bs. {amount}, "
            f"vence el 2024-0{n + 1}-15, estado pendiente.", f"{cents / 100:.2f}"))
    account = f"0412-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    evidence.append(Evidence("E5", f"Cuenta del suscriptor: {account}, plan Fibra 100.", account))
    evidence.append(Evidence("E6", "Saldo a favor registrado: USD 12,50.", "12.50"))
    chunks = rng.sample(CHUNKS, 4)
    if TRANSFER not in chunks:
        chunks[rng.randrange(4)] = TRANSFER
    for n, chunk in enumerate(chunks, start=7):
        evidence.append(Evidence(f"E{n}", chunk))
    due = evidence[1].text.split("vence el ")[1][:10]
    answer = (
        f"Su factura F-1002 es de Bs. {amounts[1]} [E2] y vence el {due[8:10]}/{due[5:7]}/{due[:4]} [E2]. "
        f"La cuenta {account} [E5] tiene además un saldo a favor de USD 12,50 [E6]. "
        f"Si paga por transferencia, el pago se refleja en 24 a 48 horas hábiles [E{7 + chunks.index(TRANSFER)}]."
    )
    return answer, evidence


DIGITS_RE = re.compile(r"\d+(?:[.,]\d+)*")


def naive_verdict(answer: str, evidence: list[Evidence]) -> bool:
    """Baseline: every digit run of the answer appears with digit boundaries somewhere in the evidence."""
    haystack = " ".join(f"{e.text} {e.value or ''}" for e in evidence)
    return all(
        re.search(rf"(?<!\d){re.escape(token)}(?!\d)", haystack) for token in DIGITS_RE.findall(answer)
    )


def rate(function, turns, seconds: float) -> float:
    """Return calls per second of function over the turns, cycling for about `seconds`."""
    calls = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        for answer, evidence in turns:
            function(answer, evidence)
        calls += len(turns)
    return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(4)
    turns = [make_turn(rng) for _ in range(args.turns)]
    grounded = sum(verify(a, e, customer_view=True).grounded for a, e in turns)
    assert grounded == len(turns), "the typical turns are meant to be grounded"

    # Without citations every sentence is checked against all ten items: the verifier's worst case.
    uncited = [(strip_citations(a), e) for a, e in turns]

    verifier = rate(lambda a, e: verify(a, e, customer_view=True), turns, args.seconds)
    worst = rate(lambda a, e: verify(a, e, customer_view=True), uncited, args.seconds)
    baseline = rate(naive_verdict, turns, args.seconds)
    print(f"turns: {len(turns)} distinct, 3 sentences, 10 evidence items, customer view, one core")
    print(f"bot.grounding.verify, cited answers   : {verifier:9,.0f} verdicts/s (target ≥ 5,000)")
    print(f"bot.grounding.verify, uncited answers : {worst:9,.0f} verdicts/s (every item indexed)")
    print(f"naive digit-boundary search (baseline): {baseline:9,.0f} verdicts/s (same inputs, same run)")
    print(f"ratio verify/baseline                 : {verifier / baseline:9.2f} (uncited {worst / baseline:.2f})")


if __name__ == "__main__":
    main()
