"""Settings page where a user creates, sees and revokes their own API token."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from rest_framework.authtoken.models import Token

from .common import HtmxRequest


@login_required
def tokens(request: HtmxRequest) -> HttpResponse:
    if request.method == "POST":
        action = request.POST.get("action")
        Token.objects.filter(user=request.user).delete()
        if action == "create":
            # Creating always replaces: the old key stops working at once.
            Token.objects.create(user=request.user)
            messages.success(request, "New API token created. The previous one no longer works.")
        else:
            messages.success(request, "API token revoked.")
        return redirect("settings_tokens")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "annotation/tokens.html", {"token": token})
