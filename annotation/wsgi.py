from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
application = get_wsgi_application()
from annotation import reports  # noqa: E402  (after the app registry is ready)

# Import every view now (numpy, scipy and scikit-learn come with the reports), not on each
# gunicorn worker's first request, which took seconds; under `gunicorn --preload` the
# workers share these pages. And what a first report would do once (templates, scikit-learn).
reports.warm_up()
