from django.db import models


class StaffAccess(models.Model):
    """Holder of the role permissions; no table, only permission rows."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("use_desk", "Work the escalation queue and conversations"),
            ("approve_credit_notes", "Approve credit notes"),
            ("review_traces", "Review traces, code failures and run evals"),
            ("edit_kb", "Edit the knowledge base"),
        ]
