"""Signals other rooms may listen to without traces importing them."""

from django.dispatch import Signal

# Sent inside the transaction that saved a review note; kwargs: note (a ReviewNote).
review_note_saved = Signal()
