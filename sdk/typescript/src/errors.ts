// Errors named after the Engram API's error codes. Every error the server
// answers is {"error": {"code", "message"}}; the client throws the class whose
// code is that code, carrying code, message and the HTTP status.

import type { components } from "./openapi.js";

/** The API's error codes, from the OpenAPI document. */
export type ErrorCode = components["schemas"]["Error"]["error"]["code"];

/** An error from the Engram server or from reaching it. */
export class EngramError extends Error {
  static readonly code: string = "error";
  readonly code: string;
  readonly status: number | undefined;

  constructor(message: string, options: { code?: string; status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? (new.target as typeof EngramError).code;
    this.status = options.status;
  }
}

/** 400: the request is invalid. */
export class BadRequest extends EngramError { static override readonly code: string = "bad_request"; }
/** 400: the body is not JSON. */
export class InvalidJSON extends BadRequest { static override readonly code: string = "invalid_json"; }
/** 400: the body has a field the route does not take. */
export class UnknownField extends BadRequest { static override readonly code: string = "unknown_field"; }
/** 401: no API key, or one the server does not know. */
export class Unauthorized extends EngramError { static override readonly code: string = "unauthorized"; }
/** 403: a scope outside the API key's. */
export class Forbidden extends EngramError { static override readonly code: string = "forbidden"; }
/** 404: no such memory in the caller's scope (another tenant's answers the same). */
export class NotFound extends EngramError { static override readonly code: string = "not_found"; }
/** 405: the route does not take this method. */
export class MethodNotAllowed extends EngramError { static override readonly code: string = "method_not_allowed"; }
/** 409: the id names several memories below the caller's scope; pass within. */
export class Ambiguous extends EngramError { static override readonly code: string = "ambiguous"; }
/** 413: the body or batch is larger than the server allows. */
export class TooLarge extends EngramError { static override readonly code: string = "too_large"; }
/** 415: a body type the server refuses. */
export class UnsupportedMediaType extends EngramError { static override readonly code: string = "unsupported_media_type"; }
/** 507: the store's disk is full; nothing of the write was stored, and it succeeds once there is room. */
export class InsufficientStorage extends EngramError { static override readonly code: string = "insufficient_storage"; }
/** The server took longer than it allows, or no answer came within the client's timeout. */
export class Timeout extends EngramError { static override readonly code: string = "timeout"; }
/** 503: the server is not ready. */
export class Unavailable extends EngramError { static override readonly code: string = "unavailable"; }
/** 500: the server failed; its log has the details. */
export class Internal extends EngramError { static override readonly code: string = "internal"; }
/** 429 without an API error body (a proxy in front of the server). */
export class TooManyRequests extends EngramError { static override readonly code: string = "too_many_requests"; }
/** The connection failed before an answer came. */
export class Unreachable extends EngramError { static override readonly code: string = "unreachable"; }
/** An export stream that was cut, or whose Engram-Export-Count trailer is missing or wrong. */
export class ExportIncomplete extends EngramError { static override readonly code: string = "export_incomplete"; }

/** The class of each API error code. */
export const errorClasses: Record<ErrorCode, typeof EngramError> = {
  bad_request: BadRequest,
  invalid_json: InvalidJSON,
  unknown_field: UnknownField,
  unauthorized: Unauthorized,
  forbidden: Forbidden,
  not_found: NotFound,
  method_not_allowed: MethodNotAllowed,
  ambiguous: Ambiguous,
  too_large: TooLarge,
  unsupported_media_type: UnsupportedMediaType,
  timeout: Timeout,
  unavailable: Unavailable,
  internal: Internal,
  insufficient_storage: InsufficientStorage,
};

const byStatus: Record<number, typeof EngramError> = {
  400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed, 409: Ambiguous,
  413: TooLarge, 415: UnsupportedMediaType, 429: TooManyRequests, 500: Internal, 503: Unavailable, 507: InsufficientStorage,
};

/** The error for an answer: by its API code, else by its HTTP status. */
export function errorFrom(status: number, body: string, fallback: string): EngramError {
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined;
  }
  const e = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (e && typeof e.code === "string" && e.code) {
    const cls = (errorClasses as Record<string, typeof EngramError>)[e.code] ?? EngramError;
    return new cls(typeof e.message === "string" && e.message ? e.message : fallback, { code: e.code, status });
  }
  const cls = byStatus[status] ?? EngramError;
  return new cls(fallback, { code: cls === EngramError ? `http_${status}` : cls.code, status });
}
