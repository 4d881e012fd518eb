"""Schemathesis against a live ``memgauge serve``: every operation of the published OpenAPI schema
with generated requests (valid and invalid ones), as an admin and as a submitter, on SQLite and on
PostgreSQL (skipped when there is none, as in the other service tests).

Every answer must pass four checks: no 5xx (``not_a_server_error``), a status code the operation
documents (``status_code_conformance``), a content type it documents for that status
(``content_type_conformance``), and a body that matches the documented schema
(``response_schema_conformance``). Uploads that Schemathesis cannot generate (it names every file
part after its field, so no upload is ever a ``.py``) and broken multipart bodies are sent by hand
and held to the same checks.

Bounded and deterministic: Hypothesis is derandomized, with at most ``MAX_EXAMPLES`` generated cases
per operation (plus Schemathesis's coverage cases), no deadline. Nothing is excluded. A DELETE of
the test's own tokens is redirected to a spare token, so that the rest of the run is not a wall of
401s; random ids and names would almost never exist, so half of the well-formed ones are pointed at
seeded submissions and a seeded policy (and machine), and half of the generated budgets are made valid.
"""

from __future__ import annotations

import contextlib
import io
import re
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
httpx = pytest.importorskip("httpx")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis import checks as st_checks  # noqa: E402
from schemathesis.specs.openapi import checks as oa_checks  # noqa: E402

from tests.service_server import Server, admin_token, postgres_database  # noqa: E402

MAX_EXAMPLES = 25
CHECKS = [
    st_checks.not_a_server_error,
    oa_checks.status_code_conformance,
    oa_checks.content_type_conformance,
    oa_checks.response_schema_conformance,
]
HYPOTHESIS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
MAX_UPLOAD = 1 << 20  # the server runs with --max-upload 1MiB: the 413s cost little to reach
POLICY = "fuzzed"
BUDGETS = ("rss=256MiB wall=30s", "rss=1GiB", "wall=2s", "rss=64MiB wall=1min")
SUBMISSIONS = "/api/v1/submissions"
WELL_FORMED = {"sub_id": re.compile(r"[0-9a-f]{32}"), "name": re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")}


@dataclass
class Live:
    """The server and what the module made on it: ``protected``, the ids of the test's own tokens
    (a generated DELETE of one hits ``spare`` instead); ``submissions``, the seeded submissions'
    ids (the admin's first)."""

    server: Server
    submitter: str
    protected: frozenset[int]
    spare: int
    submissions: tuple[str, ...]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with postgres_database() if request.param == "postgres" else contextlib.nullcontext() as db:
        base = tmp_path_factory.mktemp(f"schemathesis-{request.param}")
        extra = ["--max-upload", f"{MAX_UPLOAD}", "--max-wall", "20s"]
        server = Server(base / "data", db, admin_token(), extra=extra).start()
        try:
            yield _seed(server)
        finally:
            server.stop()


def _seed(server: Server) -> Live:
    with server.client() as admin:
        # a machine of the seeded name, which "default" admits its passes to: the machines' routes
        # and releasing reach a machine that exists and shares that are held
        assert admin.put(f"/api/v1/machines/{POLICY}", json={"memory": "10GiB", "cores": 2}).is_success
        for name in ("default", POLICY):
            body = {"budget": BUDGETS[0], "machine": POLICY if name == "default" else None}
            assert admin.put(f"/api/v1/policies/{name}", json=body).is_success
        made = admin.post("/api/v1/tokens", json={"name": "submitter", "role": "submitter"}).json()
        spare = admin.post("/api/v1/tokens", json={"name": "spare", "role": "submitter"}).json()
        me = admin.get("/api/v1/me").json()
        ids = []
        with server.client(made["token"]) as submitter:
            for client, code in (
                (admin, "print('ok')\n"),
                (submitter, "print('ok')\n"),
                (submitter, "import time\ntime.sleep(60)\n"),
            ):
                r = client.post(
                    SUBMISSIONS,
                    files={"file": ("prog.py", code.encode())},
                    data={"policy": "default", "args": '["--rows", "10"]'},
                )
                assert r.status_code == 201, r.text
                ids.append(r.json()["id"])
        # the two short ones finish (done once runs are sandboxed, failed before), so that their
        # verdict, profile, report and output are there to read; the sleeper stays to be cancelled
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if all(admin.get(f"{SUBMISSIONS}/{i}").json()["status"] in ("done", "failed") for i in ids[:2]):
                break
            time.sleep(0.2)
    return Live(server, made["token"], frozenset({me["id"], made["id"]}), spare["id"], tuple(ids))


def _published_schema() -> dict[str, Any]:
    """The OpenAPI document ``/openapi.json`` serves, built from the app without starting it."""
    import tempfile

    from memgauge.service import Settings, create_app

    with tempfile.TemporaryDirectory() as tmp:
        document: dict[str, Any] = create_app(Settings(data_dir=tmp)).openapi()
    return document


# Loaded at import rather than from the live server, which gives one test item per operation;
# Schemathesis's lazy loader (schemathesis.pytest.from_fixture) fails under pytest 9.2 anyway
# ("'Function' object has no attribute '_nodeid'"). test_schema_is_the_served_one checks that it is
# the document the server publishes.
schema = schemathesis.openapi.from_dict(_published_schema())


def test_schema_is_the_served_one(live: Live) -> None:
    served = schemathesis.openapi.from_url(live.server.url + "/openapi.json")
    assert served.raw_schema == schema.raw_schema


def _half(value: str) -> int | None:
    """A deterministic coin for a generated value: None half the time, else a number to pick with."""
    crc = zlib.crc32(value.encode("utf-8", "surrogatepass"))
    return None if crc % 2 else crc // 2


def _steer(case: Any, live: Live) -> None:
    params = dict(case.path_parameters or {})
    for key, pattern in WELL_FORMED.items():
        value = params.get(key)
        if isinstance(value, str) and pattern.fullmatch(value) and (pick := _half(value)) is not None:
            params[key] = live.submissions[pick % len(live.submissions)] if key == "sub_id" else POLICY
    if case.operation.path == "/api/v1/tokens/{token_id}" and _token_id_sent(case) in live.protected:
        # revoking the test's own tokens would turn every later case into a 401
        params["token_id"] = live.spare
    if params:
        case.path_parameters = params
    body = case.body
    budget = body.get("budget") if case.operation.method.upper() == "PUT" and isinstance(body, dict) else None
    if isinstance(budget, str) and (pick := _half(budget)) is not None:
        case.body = {**body, "budget": BUDGETS[pick % len(BUDGETS)]}


def _token_id_sent(case: Any) -> int | None:
    """The token id the server reads from this case's path (FastAPI parses it like this), if any."""
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(int).validate_python(unquote(case.formatted_path.rsplit("/", 1)[-1]))
    except ValidationError:
        return None


def _call(case: Any, live: Live, token: str) -> None:
    _steer(case, live)
    case.call_and_validate(
        base_url=live.server.url, headers={"Authorization": f"Bearer {token}"}, checks=CHECKS, timeout=30
    )


@schema.parametrize()
@HYPOTHESIS
def test_api_as_admin(case: Any, live: Live) -> None:
    _call(case, live, live.server.admin)


@schema.parametrize()
@HYPOTHESIS
def test_api_as_submitter(case: Any, live: Live) -> None:
    _call(case, live, live.submitter)


# -- uploads by hand ---------------------------------------------------------------------------------


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()


def _tgz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _multipart(*parts: tuple[str, bytes], boundary: bytes = b"b0undary", end: bool = True) -> bytes:
    """A multipart body from (headers, content) parts, written by hand to get it wrong on purpose."""
    body = b"".join(
        b"--" + boundary + b"\r\n" + headers.encode() + b"\r\n\r\n" + content + b"\r\n"
        for headers, content in parts
    )
    return body + (b"--" + boundary + b"--\r\n" if end else b"")


def _file_part(filename: str) -> str:
    return f'Content-Disposition: form-data; name="file"; filename="{filename}"'


PROGRAM = b"print('ok')\n"
POLICY_FIELD = ('Content-Disposition: form-data; name="policy"', b"default")
DEEP = "/".join(["d" * 200] * 5) + "/main.py"  # 1015 characters: an archive may hold it, a row may not
FORM = "multipart/form-data; boundary=b0undary"

# (what, status, httpx keyword arguments)
UPLOADS: list[tuple[str, int, dict[str, Any]]] = [
    ("a .py program", 201, {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "default"}}),
    (
        "a zip project",
        201,
        {"files": {"file": ("p.zip", _zip({"main.py": PROGRAM}))}, "data": {"policy": "default"}},
    ),
    (
        "a tar.gz project, its entry named",
        201,
        {
            "files": {"file": ("p.tar.gz", _tgz({"a.py": PROGRAM, "b.py": PROGRAM}))},
            "data": {"policy": "default", "entry": "b.py"},
        },
    ),
    ("an unknown policy", 422, {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "nope"}}),
    ("a NUL in the policy", 422, {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "de\x00fault"}}),
    (
        "args not JSON",
        422,
        {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "default", "args": "x"}},
    ),
    (
        "a NUL in args",
        422,
        {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "default", "args": '["\\u0000"]'}},
    ),
    (
        "an entry for a .py",
        422,
        {"files": {"file": ("ok.py", PROGRAM)}, "data": {"policy": "default", "entry": "x.py"}},
    ),
    (
        "a file that is not a program",
        422,
        {"files": {"file": ("x.exe", b"MZ")}, "data": {"policy": "default"}},
    ),
    (
        "a .py that is not UTF-8",
        422,
        {"files": {"file": ("ok.py", b"\xff\xfe")}, "data": {"policy": "default"}},
    ),
    (
        "a .zip that is not one",
        422,
        {"files": {"file": ("p.zip", b"garbage")}, "data": {"policy": "default"}},
    ),
    (
        "a .zip with a NUL in its name",
        422,
        {
            "content": _multipart(POLICY_FIELD, (_file_part("p\x00.zip"), _zip({"main.py": PROGRAM}))),
            "headers": {"Content-Type": FORM},
        },
    ),
    (
        "a .zip with a 300-character name",
        422,
        {"files": {"file": ("p" * 296 + ".zip", _zip({"main.py": PROGRAM}))}, "data": {"policy": "default"}},
    ),
    (
        "an entry of 1015 characters",
        422,
        {"files": {"file": ("p.zip", _zip({DEEP: PROGRAM}))}, "data": {"policy": "default", "entry": DEEP}},
    ),
    ("no file", 422, {"data": {"policy": "default"}, "files": {"other": ("x", b"x")}}),
    ("no policy", 422, {"files": {"file": ("ok.py", PROGRAM)}}),
    (
        "the file as a plain field",
        422,
        {
            "content": _multipart(POLICY_FIELD, ('Content-Disposition: form-data; name="file"', PROGRAM)),
            "headers": {"Content-Type": FORM},
        },
    ),
    ("a JSON body", 422, {"json": {"file": "print(1)", "policy": "default"}}),
    ("an urlencoded form", 422, {"data": {"file": "print(1)", "policy": "default"}}),
    ("no body", 422, {}),
    (
        "multipart without a boundary",
        400,
        {"content": b"garbage", "headers": {"Content-Type": "multipart/form-data"}},
    ),
    ("multipart garbage", 400, {"content": b"\x00\xff" * 100, "headers": {"Content-Type": FORM}}),
    (
        "multipart cut short",  # Starlette reads what there is: the fields are missing
        422,
        {"content": _multipart(POLICY_FIELD, end=False)[:-10], "headers": {"Content-Type": FORM}},
    ),
    (
        "an upload over --max-upload",
        413,
        {"files": {"file": ("big.py", b"#" * (MAX_UPLOAD + 1))}, "data": {"policy": "default"}},
    ),
    (
        "a body over the limit (refused unread)",
        413,
        {"content": b"x" * (3 * MAX_UPLOAD), "headers": {"Content-Type": FORM}},
    ),
]


@pytest.mark.parametrize(("what", "status", "kwargs"), UPLOADS, ids=[u[0] for u in UPLOADS])
def test_upload(live: Live, what: str, status: int, kwargs: dict[str, Any]) -> None:
    with live.server.client() as admin:  # whatever the generated cases did to it
        assert admin.put("/api/v1/policies/default", json={"budget": BUDGETS[0]}).is_success
    with live.server.client(live.submitter) as client:
        response = client.post(SUBMISSIONS, **kwargs)
        response.request.read()  # multipart requests stream: the checks read the request back
    assert response.status_code == status, f"{what}: {response.status_code} {response.text[:500]}"
    schema[SUBMISSIONS]["POST"].Case().validate_response(response, checks=CHECKS)


def test_upload_needs_a_token(live: Live) -> None:
    response = httpx.post(
        live.server.url + SUBMISSIONS, files={"file": ("ok.py", PROGRAM)}, data={"policy": "default"}
    )
    assert response.status_code == 401
    response.request.read()
    schema[SUBMISSIONS]["POST"].Case().validate_response(response, checks=CHECKS)
