from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
application = get_asgi_application()

from annotation import reports  # noqa: E402  (after the app registry is ready)

reports.warm_up()  # the views imported and what a first report would do once, as wsgi.py
