from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client

from annotation import models
from annotation.models import Item


def test_every_model_has_a_working_admin_page(
    client: Client, alpha_items: list[Item], db: None
) -> None:
    ours = [m for m in admin.site._registry if m._meta.app_label == "annotation"]
    missing = {
        m.__name__
        for m in vars(models).values()
        if isinstance(m, type)
        and issubclass(m, models.models.Model)
        and m._meta.app_label == "annotation"
        and not m._meta.abstract
    } - {m.__name__ for m in ours}
    assert not missing
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    for model in ours:
        url = f"/admin/annotation/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url
