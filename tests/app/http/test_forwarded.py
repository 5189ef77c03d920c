"""Whose address a push counts against, on the service as `hbench-app serve` runs it: the
peer's, whatever `X-Forwarded-For` or `Forwarded` claim, unless the peer is a proxy that
`HBENCH_TRUSTED_PROXIES` names; then the nearest address in the chain that is not one."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.http.forwarded import Hop, forwarded_client, parse_forwarded, trusted_networks
from app.main import create_app
from app.settings import Settings
from tests.app.v1.conftest import summary

from ..conftest import NO_REGRADES
from .conftest import served


def pusher(address: tuple[str, int]) -> httpx.Client:
    return httpx.Client(base_url=f"http://{address[0]}:{address[1]}", timeout=30)


def test_spoofed_forwarding_headers_are_ignored_by_default(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path / "state", **NO_REGRADES)
    assert settings.trusted_proxies == ()
    app = create_app(settings)
    with served(app, settings, log_level="warning") as address, pusher(address) as client:
        for n in range(30):
            invented = {
                "x-forwarded-for": f"198.51.100.{n}",
                "forwarded": f"for=203.0.113.{n};proto=https",
            }
            answer = client.post("/v1/runs", json=summary(), headers=invented)
            assert answer.status_code == 201, (n, answer.text)
        # The 31st anonymous push in a day is refused, whatever the headers say.
        for invented in (
            {"x-forwarded-for": "192.0.2.250"},
            {"forwarded": 'for="[2001:db8::7]:4711"'},
            {"x-forwarded-for": "192.0.2.251", "forwarded": "for=192.0.2.252"},
            {},
        ):
            refused = client.post("/v1/runs", json=summary(), headers=invented)
            assert refused.status_code == 429, invented
            assert refused.json()["error"]["code"] == "rate_limited"


@pytest.fixture
def behind_a_proxy(tmp_path: Path) -> Settings:
    """The service behind a proxy on the loopback, two anonymous pushes per address a day."""
    return Settings(
        state_dir=tmp_path / "state",
        trusted_proxies="127.0.0.1",
        runs_per_ip_per_day=2,
        **NO_REGRADES,
    )


def test_a_configured_proxys_headers_are_believed(behind_a_proxy: Settings) -> None:
    app = create_app(behind_a_proxy)
    with served(app, behind_a_proxy, log_level="warning") as address, pusher(address) as client:

        def push(**headers: str) -> int:
            sent = {name.replace("_", "-"): value for name, value in headers.items()}
            return client.post("/v1/runs", json=summary(), headers=sent).status_code

        # X-Forwarded-For, as the proxy appends it: the rightmost untrusted address counts,
        # so what the client wrote to its left changes nothing.
        assert push(x_forwarded_for="198.51.100.1") == 201
        assert push(x_forwarded_for="6.6.6.6, 198.51.100.1") == 201
        assert push(x_forwarded_for="7.7.7.7, 198.51.100.1") == 429
        assert push(x_forwarded_for="198.51.100.2") == 201
        # Forwarded (RFC 7239), for a proxy that sends it instead.
        assert push(forwarded="for=203.0.113.9;proto=https") == 201
        assert push(forwarded='for="[2001:db8::9]:4711", for=203.0.113.9') == 201
        assert push(forwarded="for=203.0.113.9") == 429
        assert push(forwarded='for="[2001:db8::9]"') == 201
        # The proxy's own requests, with no header, count against the proxy.
        assert push() == 201
        assert push() == 201
        assert push() == 429


def test_the_client_is_the_nearest_untrusted_hop() -> None:
    proxies = trusted_networks(["10.0.0.0/8", "2001:db8:1::/48"])
    hops = parse_forwarded(
        ['for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::1]:4711"', "for=10.1.2.3"]
    )
    assert hops == [
        Hop("192.0.2.60", "http"),
        Hop("2001:db8::1", None),
        Hop("10.1.2.3", None),
    ]
    assert forwarded_client(hops, proxies) == Hop("2001:db8::1", None)
    assert forwarded_client(parse_forwarded(['for=10.0.0.1;proto="https"']), proxies) == Hop(
        "10.0.0.1", "https"
    )
    assert forwarded_client(parse_forwarded(["by=10.0.0.1", "garbage"]), proxies) is None
