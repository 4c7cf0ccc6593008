"""Prolific's REST API (issue 41): the operator's workspaces (`workspaces.py`), a small
client for the documented calls (`client.py`, plain Python), the records of studies,
submissions and bonuses (`models.py`), what the hiring page and API do with them
(`services.py`) and a fake Prolific server for tests and the demo (`fake.py`, plain
Python: `python -m annotation.prolific.fake`).

Nothing here is needed for the manual path (copy the invite URL and codes into Prolific's
web page, approve there, upload the bonus file): it works as before without a workspace.
This module imports nothing, so the fake runs without Django.
"""
