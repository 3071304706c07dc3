/**
 * The errors Fastify's router and Node's HTTP parser answer themselves, in the catalogue's shape
 * (docs/api-errors.md: `{code, error, message}` for every non-2xx answer).
 *
 * - Router (`frameworkErrors`): a path that is not valid percent-encoding (FST_ERR_BAD_URL) is
 *   400 path_invalid; a path segment longer than MAX_PATH_PARAM_LENGTH (FST_ERR_MAX_PARAM_LENGTH)
 *   is 414 path_too_long.
 * - HTTP parser (`clientErrorHandler`, before any request object exists): an unknown method, a
 *   bad request line or header, a Content-Length that does not fit, a broken chunked body is
 *   400 http_malformed; headers over the limit 431 headers_too_large; a request that does not
 *   arrive in time 408 request_timeout. The connection is closed after the answer.
 */
import { STATUS_CODES } from "node:http";
import { ApiError } from "../../errors/api-errors.ts";

/** Longest path segment the router matches: job ids are 22 characters, customer numbers fewer. */
export const MAX_PATH_PARAM_LENGTH = 100;

/** Keeps a client-supplied path short and printable in a message. */
function showPath(url: string): string {
  const path = url.split("?")[0] ?? "";
  const printable = path.replace(/[^\x21-\x7e]/g, "?");
  return printable.length > 120 ? `${printable.slice(0, 120)}…` : printable;
}

export function frameworkErrorToApiError(error: { code?: string; message: string }, url: string): ApiError {
  if (error.code === "FST_ERR_BAD_URL") {
    return new ApiError("path_invalid", `The path ${showPath(url)} is not valid percent-encoding (a "%" must be followed by two hex digits of UTF-8)`);
  }
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return new ApiError("path_too_long", `A segment of the path ${showPath(url)} is longer than ${MAX_PATH_PARAM_LENGTH} characters; no customer number or job id is that long`);
  }
  return new ApiError("invalid_request", error.message);
}

/** The raw HTTP answer to a parser error, or null when the connection is gone anyway. */
export function clientErrorAnswer(error: Error & { code?: string; reason?: string }): string | null {
  if (error.code === "ECONNRESET" || error.code === "EPIPE") return null;
  let apiError: ApiError;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    apiError = new ApiError("request_timeout", "The request did not arrive completely in time; send it again");
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    apiError = new ApiError("headers_too_large", "The request headers exceed the size limit of this node; send fewer or shorter headers");
  } else {
    const reason = error.reason ?? error.message;
    apiError = new ApiError("http_malformed", `The request is not valid HTTP/1.1 (${reason}); check the method, the headers and that the body matches its Content-Length or chunked encoding`);
  }
  const body = JSON.stringify(apiError.toBody());
  return (
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ""}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
