"""Shared by the API tests: token clients for the personas."""

from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def token_client(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def submit_body(
    choice: str = "1", justification: str = "The first list covers every fact in the text."
) -> dict:
    return {
        "answers": [
            {"unit": "item", "field": "choice", "value": choice},
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": justification},
        ]
    }
