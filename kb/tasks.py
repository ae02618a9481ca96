"""Celery tasks of the knowledge base: thin — take ids, load, call one service."""

from celery import shared_task

from kb.editing import reembed_job_run
from kb.embeddings import get_embedder
from kb.models import ReembedJob


@shared_task(name="kb.reembed_document", acks_late=True, ignore_result=True)
def reembed_document(job_id: int) -> None:
    """Embed the chunks an edit created without a vector (progress is recorded on the job)."""
    job = ReembedJob.objects.filter(pk=job_id).first()
    if job is None or job.status == ReembedJob.Status.DONE:
        return
    reembed_job_run(job=job, embedder=get_embedder())
