"""Project-wide pytest fixtures."""

import os

import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


@pytest.fixture
def make_staff(django_user_model):
    """Return a factory for a staff user in the given role groups."""
    from django.contrib.auth.models import Group

    def make(username="staff", *roles, password="pw-for-tests-1"):
        user = django_user_model.objects.create_user(username=username, password=password)
        for role in roles:
            user.groups.add(Group.objects.get(name=role))
        return user

    return make
