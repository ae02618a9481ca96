"""The ground every room stands on: roles and navigation, access helpers, and small text utilities."""
