from __future__ import annotations

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import endpoints, login_throttle  # noqa: F401  (system check, signal receiver)
