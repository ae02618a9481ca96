"""The desk's pages, one module per subject: the web chat, the inbox, search, a conversation and credit notes.

Each view checks permission through desk.access, calls one service or selector and renders; desk/urls.py
maps the URLs onto them.
"""
