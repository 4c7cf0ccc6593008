"""The REST API for machine clients (DRF): same model methods, forms, operations and
blinding as the HTML views. One module per resource (`projects`, `documents`, `items`,
`assignments`, `results`, `pipeline_runs`, `hiring`), `common.py` the shared lookups and
schema parts, `errors.py` the error shape, throttling and pagination, `urls.py` the
routes under /api/."""
