"""A shop's MCP server for the e2e suite, written with the official Python SDK (FastMCP),
served over streamable HTTP on 127.0.0.1.

Usage: mcp_shop.py PORT TOKEN EXTENSION_ORIGIN

Every request but a CORS preflight must carry `Authorization: Bearer TOKEN`. The extension
calls from its own origin, so the server allows it twice over: in the SDK's DNS-rebinding
check (which by default allows only http://127.0.0.1 pages) and in CORS, exposing
Mcp-Session-Id so the client can read its session.
"""

import sys
from typing import TypedDict

import uvicorn
from mcp.server.fastmcp import FastMCP
from mcp.server.transport_security import TransportSecuritySettings
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse

port, token, extension = int(sys.argv[1]), sys.argv[2], sys.argv[3]

shop = FastMCP(
    "shop",
    host="127.0.0.1",
    port=port,
    transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}"],
        allowed_origins=[extension],
    ),
)

STOCK = {"KET-1": (39.5, 7), "MUG-2": (8.0, 0)}


class Availability(TypedDict):
    price: float
    stock: int


@shop.tool()
def lookup(sku: str) -> Availability:
    """Looks up a SKU's price in EUR and the units in stock."""
    if sku not in STOCK:
        raise ValueError(f"unknown sku {sku}")
    price, stock = STOCK[sku]
    return {"price": price, "stock": stock}


@shop.tool()
def restock(sku: str, units: int) -> str:
    """Orders more units of a SKU from the supplier."""
    return f"ordered {units} of {sku}"


inner = shop.streamable_http_app()


async def with_token(scope, receive, send):
    if scope["type"] == "http":
        given = dict(scope["headers"]).get(b"authorization", b"")
        if given != f"Bearer {token}".encode():
            response = JSONResponse({"error": "a bearer token is required"}, status_code=401)
            await response(scope, receive, send)
            return
    await inner(scope, receive, send)


app = CORSMiddleware(
    with_token,
    allow_origins=[extension],
    allow_methods=["GET", "POST", "DELETE"],
    allow_headers=["*"],
    expose_headers=["Mcp-Session-Id"],
)

if __name__ == "__main__":
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
