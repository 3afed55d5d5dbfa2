"""Exceptions named after the Engram API's error codes.

Every error the server answers is ``{"error": {"code": "...", "message": "..."}}``;
the client raises the class whose ``code`` is that code, carrying ``code``,
``message`` and the HTTP ``status``. Codes this version does not know raise
:class:`EngramError` itself with the code as sent.
"""

from __future__ import annotations

from typing import Any


class EngramError(Exception):
    """An error from the Engram server or from reaching it."""

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = status

    def __str__(self) -> str:
        where = f"{self.status} " if self.status is not None else ""
        return f"{where}{self.code}: {self.message}"


class BadRequest(EngramError):
    """400: the request is invalid (a field's value, a missing field)."""

    code = "bad_request"


class InvalidJSON(BadRequest):
    """400: the body is not JSON."""

    code = "invalid_json"


class UnknownField(BadRequest):
    """400: the body has a field the route does not take."""

    code = "unknown_field"


class Unauthorized(EngramError):
    """401: no API key, or one the server does not know."""

    code = "unauthorized"


class Forbidden(EngramError):
    """403: a scope outside the API key's."""

    code = "forbidden"


class NotFound(EngramError):
    """404: no such memory in the caller's scope (another tenant's answers the same)."""

    code = "not_found"


class MethodNotAllowed(EngramError):
    """405: the route does not take this method."""

    code = "method_not_allowed"


class Ambiguous(EngramError):
    """409: the id names several memories below the caller's scope; pass ``within=``."""

    code = "ambiguous"


class TooLarge(EngramError):
    """413: the body or batch is larger than the server allows."""

    code = "too_large"


class UnsupportedMediaType(EngramError):
    """415: a body type the server refuses."""

    code = "unsupported_media_type"


class InsufficientStorage(EngramError):
    """507: the store's disk is full; nothing of the write was stored, and it succeeds once there is room."""

    code = "insufficient_storage"


class Timeout(EngramError):
    """The server took longer than it allows (503 ``timeout``), or no answer came within the client's timeout."""

    code = "timeout"


class Unavailable(EngramError):
    """503: the server is not ready (starting or shutting down)."""

    code = "unavailable"


class Internal(EngramError):
    """500: the server failed; its log has the details."""

    code = "internal"


class TooManyRequests(EngramError):
    """429 without an API error body (a proxy in front of the server)."""

    code = "too_many_requests"


class Unreachable(EngramError):
    """The connection failed before an answer came."""

    code = "unreachable"


class ExportIncomplete(EngramError):
    """An export stream that was cut, or whose Engram-Export-Count trailer is missing or wrong."""

    code = "export_incomplete"


_BY_CODE: dict[str, type[EngramError]] = {
    c.code: c
    for c in (
        BadRequest, InvalidJSON, UnknownField, Unauthorized, Forbidden, NotFound, MethodNotAllowed,
        Ambiguous, TooLarge, UnsupportedMediaType, Timeout, Unavailable, Internal, InsufficientStorage,
    )
}

_BY_STATUS: dict[int, type[EngramError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    409: Ambiguous, 413: TooLarge, 415: UnsupportedMediaType, 429: TooManyRequests,
    500: Internal, 503: Unavailable, 507: InsufficientStorage,
}


def error_from(status: int, body: Any, fallback: str) -> EngramError:
    """The exception for an error answer: by its code, else by its status."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        e = body["error"]
        code, message = str(e.get("code", "")), str(e.get("message", ""))
        if code:
            cls = _BY_CODE.get(code, EngramError)
            return cls(message or fallback, code=code, status=status)
    cls = _BY_STATUS.get(status, EngramError)
    code = cls.code if cls is not EngramError else f"http_{status}"
    return cls(fallback, code=code, status=status)
