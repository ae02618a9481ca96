"""A conversation's turns together in the trace browser: every turn in order, each linked to its trace."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from desk.models import Conversation
from traces import selectors
from traces.access import may_read_traces
from traces.conversation import turn_rows


@login_required
def conversation_turns(request, conversation_id):
    """List every turn of one conversation in order: the customer's message, the reply, route and outcome."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    conversation = get_object_or_404(Conversation.objects.select_related("contact"), pk=conversation_id)
    turns = selectors.conversation_turns(conversation_id=conversation.pk)
    rows = turn_rows([(t.pk, (t.message.text if t.message_id and t.message and t.message.text else t.query),
                       t.final_text, t.route, t.outcome, t.escalation_reason) for t in turns])
    return render(request, "traces/conversation.html", {
        "conversation": conversation, "rows": rows,
        "repeats": sum(1 for row in rows if row.repeats_previous),
    })
