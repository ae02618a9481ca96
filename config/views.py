from django.contrib.auth.decorators import login_required
from django.shortcuts import render


@login_required
def home(request):
    """Show the signed-in staff member the rooms their roles open."""
    return render(request, "home.html")
