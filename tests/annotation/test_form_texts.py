"""No form's help text holds raw `<...>`: Django prints help texts as HTML, so
"(default: <system>-verifier)" showed as "(default: -verifier)" (issue 29, point 5)."""

from __future__ import annotations

import importlib
import pkgutil

from django import forms


def all_forms() -> list[type[forms.BaseForm]]:
    for package in ("annotation.kinds", "annotation.views"):
        for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
            importlib.import_module(f"{package}.{module.name}")
    for name in ("forms", "hiring.forms", "reports.options", "login_throttle"):
        importlib.import_module(f"annotation.{name}")
    seen, todo = [], [forms.BaseForm]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("annotation."):
                seen.append(sub)
    return seen


def test_no_help_text_or_label_reads_as_an_html_tag() -> None:
    found = all_forms()
    names = {cls.__name__ for cls in found}
    assert {"ImportForm", "MemberForm", "ReportOptionsForm", "AtomicItemsForm"} <= names
    bad = [
        f"{cls.__module__}.{cls.__name__}.{name}: {text!r}"
        for cls in found
        for name, field in cls.base_fields.items()
        for text in (str(field.help_text), str(field.label or ""))
        if "<" in text or ">" in text
    ]
    assert bad == []
