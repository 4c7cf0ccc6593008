from __future__ import annotations

from importlib import import_module

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def import_models(self) -> None:
        super().import_models()
        # The hiring package's models belong to this app but live below `models.py`
        # (models.py never imports them back): loaded with the app's models.
        import_module(f"{self.name}.hiring.models")
        import_module(f"{self.name}.prolific.models")

    def ready(self) -> None:
        from . import endpoints, login_throttle  # noqa: F401  (system check, signal receiver)
        from .prolific import workspaces  # noqa: F401  (system check)
