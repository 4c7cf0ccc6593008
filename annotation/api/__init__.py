"""The REST API for machine clients (DRF): same model methods, forms and blinding as
the HTML views. `views.py` holds the endpoints, `errors.py` the error shape,
throttling and pagination, `urls.py` the routes under /api/."""
