"""The official MCP Python SDK's OAuth client, driven end to end against an MCP server.

    client.py [--protocol VERSION] MCP_URL QUERY
    client.py --token-only [--protocol VERSION] MCP_URL

Everything OAuth is the SDK's own code (`mcp.client.auth.OAuthClientProvider`): the 401,
RFC 9728 protected-resource discovery from WWW-Authenticate, authorization-server metadata
discovery, dynamic registration, PKCE, and the token request with `resource`. This script
only stands in for the person at the browser: it follows the authorization server's
redirects with a cookie jar until one points at the redirect URI.

The first form searches for QUERY, fetches the first hit and prints one JSON line; the
second prints only the access token, for tests that then talk to the server directly.
Any failure goes to stderr with exit status 1. The whole run is bounded by 30 s.

--protocol: `auto` (default) is what the SDK does unprompted: probe `server/discover` at
2026-07-28 and fall back to the `initialize` handshake. A version pins it instead:
2026-07-28 adopts the per-request era without a probe; 2025-11-25, 2025-06-18, 2025-03-26
run the `initialize` handshake offering that version.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import traceback
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import mcp.client.session as client_session
import mcp_types as types
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

# Never listened on: the authorization response is read from the Location header instead.
REDIRECT_URI = "http://127.0.0.1:9/callback"
TOTAL_TIMEOUT_S = 30
HTTP_TIMEOUT_S = 10
MAX_REDIRECTS = 20


class MemoryStorage:
    """TokenStorage that forgets everything on exit, so each run registers afresh."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessBrowser:
    """The user agent: walks the authorization URL to the redirect URI without rendering anything.

    The provider's interaction endpoints log in and consent by redirecting, so following
    Location headers while keeping its cookies is the whole "user".
    """

    def __init__(self) -> None:
        self.callback_url: str | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        url = authorization_url
        async with httpx2.AsyncClient(follow_redirects=False, timeout=HTTP_TIMEOUT_S) as http:
            for _ in range(MAX_REDIRECTS):
                response = await http.get(url)
                location = response.headers.get("location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    raise RuntimeError(
                        f"authorization stopped at {url}: HTTP {response.status_code} {response.text[:500]}"
                    )
                url = urljoin(url, location)
                if url.startswith(REDIRECT_URI):
                    self.callback_url = url
                    return
        raise RuntimeError(f"no redirect to {REDIRECT_URI} after {MAX_REDIRECTS} hops")

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.callback_url is None:
            raise RuntimeError("callback requested before the authorization redirect arrived")
        query = {key: values[0] for key, values in parse_qs(urlsplit(self.callback_url).query).items()}
        if "error" in query:
            raise RuntimeError(f"authorization error: {query}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


def jwt_claims(token: str) -> dict[str, Any]:
    """The JWT's payload, unverified: verifying is the resource server's job, not the client's."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def client_mode(protocol: str) -> str:
    """The SDK's `Client(mode=...)` for a --protocol value."""
    if protocol == "auto" or protocol in MODERN_PROTOCOL_VERSIONS:
        return protocol
    if protocol in HANDSHAKE_PROTOCOL_VERSIONS:
        # The SDK's handshake always offers its newest handshake-era version (a module
        # constant, read when `initialize` runs); to offer an older one we change it.
        client_session.LATEST_HANDSHAKE_VERSION = protocol
        return "legacy"
    raise ValueError(f"unknown --protocol {protocol!r}")


def text_of(result: types.CallToolResult) -> str | None:
    return next((item.text for item in result.content if isinstance(item, types.TextContent)), None)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"tool {name} failed: {text_of(result)}")
    return result


async def run(args: argparse.Namespace, mode: str) -> dict[str, Any] | str:
    storage = MemoryStorage()
    browser = HeadlessBrowser()
    oauth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name="cairn-test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    async with httpx2.AsyncClient(auth=oauth, timeout=HTTP_TIMEOUT_S) as http:
        transport = streamable_http_client(args.url, http_client=http)
        async with Client(
            transport,
            mode=mode,
            read_timeout_seconds=HTTP_TIMEOUT_S,
            client_info=types.Implementation(name="cairn-test", version="1"),
        ) as client:
            # A pinned modern version adopts without any request; make one so the
            # OAuth flow runs in --token-only mode as well.
            tools = await client.list_tools()
            if storage.tokens is None:
                raise RuntimeError("the server answered without asking for a token")
            token = storage.tokens.access_token
            if args.token_only:
                return token
            search = await call(client, "search", {"query": args.query})
            results = (search.structured_content or {}).get("results") or []
            if not results:
                raise RuntimeError(f"search returned no results: {search.structured_content}")
            fetch = await call(client, "fetch", {"id": results[0]["id"]})
            claims = jwt_claims(token)
            return {
                "protocol_version": client.protocol_version,
                "tools": [tool.name for tool in tools.tools],
                "search": search.structured_content,
                "search_text": text_of(search),
                "fetch": fetch.structured_content,
                "fetch_text": text_of(fetch),
                "token_audience": claims.get("aud"),
                "token_scope": claims.get("scope"),
                "token_groups": claims.get("groups"),
            }


def root_causes(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in root_causes(inner)]
    return [exc]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--token-only", "--raw-token", action="store_true", help="print only the access token")
    parser.add_argument("--protocol", default="auto", help=f"auto (default) or a version, e.g. {LATEST_HANDSHAKE_VERSION}")
    parser.add_argument("url", metavar="MCP_URL")
    parser.add_argument("query", metavar="QUERY", nargs="?")
    args = parser.parse_args()
    if not args.token_only and args.query is None:
        parser.error("QUERY is required unless --token-only")
    try:
        mode = client_mode(args.protocol)
    except ValueError as exc:
        parser.error(str(exc))

    async def bounded() -> dict[str, Any] | str:
        with anyio.fail_after(TOTAL_TIMEOUT_S):
            return await run(args, mode)

    try:
        out = anyio.run(bounded)
    except Exception as exc:
        # The traceback for whoever debugs the test, then one line per root cause for its
        # assertion message: task groups wrap failures in (nested) ExceptionGroups.
        print("".join(traceback.format_exception(exc)), file=sys.stderr)
        for cause in root_causes(exc):
            print(f"client.py: error: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    print(out if isinstance(out, str) else json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
