"""The KB editor's pages, one module per subject: documents and chunks as the retriever sees them, editing
(with history, upload, delete and re-embedding), and the search playground. kb/urls.py maps the URLs."""
