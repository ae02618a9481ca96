"""Create (or reset) one demo user per staff role and print the credentials."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from core.roles import ensure_roles

DEMO_USERS = [
    ("agent", ["agent"]),
    ("supervisor", ["supervisor", "agent"]),
    ("analyst", ["analyst"]),
    ("editor", ["kb_editor"]),
]


class Command(BaseCommand):
    help = "Create or reset the demo users agent, supervisor, analyst and editor; print their passwords."

    def add_arguments(self, parser):
        parser.add_argument("--password", help="Use this password for all of them instead of random ones.")

    def handle(self, *args, password=None, **options):
        ensure_roles()
        User = get_user_model()
        self.stdout.write("Demo users (username / password):")
        for username, roles in DEMO_USERS:
            user, _ = User.objects.get_or_create(username=username)
            secret = password or secrets.token_urlsafe(9)
            user.set_password(secret)
            user.is_staff = username == "supervisor"
            user.save()
            user.groups.set(Group.objects.filter(name__in=roles))
            self.stdout.write(f"  {username:<11} {secret:<16} roles: {', '.join(roles)}")
