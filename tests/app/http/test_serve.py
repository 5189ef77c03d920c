"""`hbench-app serve` itself, as its own process: it believes no forwarded address by
default, and its access log keeps no sign-in code."""

from __future__ import annotations

from pathlib import Path

from tests.app.http.serving import serving
from tests.app.v1.conftest import summary

CODE, STATE = "0c9a8b7e6f5d4c3b2a19", "Zq7Xw3Vt1Ur9Ys5Tp2Oq8Nm4Lk6Jh0Gf"


def test_serve_believes_no_forwarded_address_and_logs_no_sign_in_code(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        statuses = [
            served.client.post(
                "/v1/runs",
                json=summary(),
                headers={"x-forwarded-for": f"198.51.100.{n}", "forwarded": f"for=192.0.2.{n}"},
            ).status_code
            for n in range(31)
        ]
        served.client.get("/auth/github/callback", params={"code": CODE, "state": STATE})
    output = served.output
    assert statuses == [201] * 30 + [429]
    assert "/auth/github/callback?[filtered]" in output
    assert CODE not in output and STATE not in output
