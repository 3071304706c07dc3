/**
 * API errors: what a client sees when a request cannot be served.
 *
 * One catalogue. Each entry has a stable lower_snake `code`, an HTTP status and a short
 * English title. Bodies are `{"code": <status>, "error": "<code>", "message": "<detail>"}`:
 * the numeric `code` keeps the shape the provider's own gateway shows
 * (`{"code":400,"message":"Unable to process JSON"}`), `error` is the stable identifier to
 * branch on, `message` a sentence a person can act on. See docs/adr/0002-error-bodies.md.
 *
 * docs/api-errors.md lists exactly these entries; test/unit/catalogues.test.ts checks it.
 */

export interface ApiErrorDefinition {
  readonly code: string;
  readonly status: number;
  readonly title: string;
}

function def(code: string, status: number, title: string): ApiErrorDefinition {
  return Object.freeze({ code, status, title });
}

export const ApiErrors = {
  invalid_json: def("invalid_json", 400, "Unable to process JSON: the body is not valid JSON"),
  invalid_request: def("invalid_request", 400, "The request does not match the schema"),
  json_too_deep: def("json_too_deep", 400, "The JSON body nests objects and arrays deeper than allowed"),
  path_invalid: def("path_invalid", 400, "The request path is not valid percent-encoding"),
  http_malformed: def("http_malformed", 400, "The request is not valid HTTP/1.1 (request line, headers, Content-Length or chunked body)"),
  no_recipients: def("no_recipients", 400, "The job has no recipients"),
  no_content: def("no_content", 400, "The job has neither documents nor a cover page"),
  document_name_invalid: def("document_name_invalid", 400, "A document name is too long or has characters outside [a-zA-Z0-9-_.]"),
  document_type_unknown: def("document_type_unknown", 400, "A document's file extension names no known document type"),
  document_data_invalid: def("document_data_invalid", 400, "A document has neither valid base64 data nor a reference URL"),
  document_reference_forbidden: def("document_reference_forbidden", 400, "A document reference URL is not allowed"),
  document_too_large: def("document_too_large", 400, "A document or the whole job exceeds the size limit"),
  header_invalid: def("header_invalid", 400, "renderingOptions.header has a standalone % or a placeholder that cannot be used"),
  overlay_unknown: def("overlay_unknown", 400, "renderingOptions.overlay names an overlay that is not installed for the customer"),
  document_type_unavailable: def("document_type_unavailable", 400, "A document's type needs a converter that is not installed on this Faxline node"),
  charset_unsupported: def("charset_unsupported", 400, "The document charset is not one the contract names"),
  field_too_long: def("field_too_long", 400, "A field exceeds its maximum length"),
  job_valid_invalid: def("job_valid_invalid", 400, "Job expiration error: jobValid.start or jobValid.end is not valid"),
  enum_value_invalid: def("enum_value_invalid", 400, "A field has a value outside its allowed set"),
  number_invalid: def("number_invalid", 400, "A recipient number is not a valid fax number"),
  too_many_recipients: def("too_many_recipients", 400, "The job has more recipients than allowed"),
  too_many_documents: def("too_many_documents", 400, "The job has more documents than allowed"),
  too_many_job_ids: def("too_many_job_ids", 400, "A bulk request may name at most 1000 job ids"),
  bulk_action_invalid: def("bulk_action_invalid", 400, "The bulk action must be GET or DELETE"),
  graphql_query_invalid: def("graphql_query_invalid", 400, "The GraphQL request has no query, cannot be parsed, or asks for fields or arguments the schema does not have"),
  query_too_deep: def("query_too_deep", 400, "The GraphQL query nests fields deeper than reporting.maxDepth allows"),
  query_too_costly: def("query_too_costly", 400, "The GraphQL query could return more than reporting.maxCost allows; ask for smaller pages or fewer fields"),
  date_period_invalid: def("date_period_invalid", 400, "datePeriod is not two ISO-8601 UTC instants with fromIncluded before toExcluded (aggregates: whole UTC days)"),
  date_period_too_long: def("date_period_too_long", 400, "datePeriod spans more than one query may (45 days for usage records: reporting.maxQuerySpan)"),
  date_period_too_old: def("date_period_too_old", 400, "datePeriod starts further back than the reporting history (90 days: reporting.history)"),
  page_invalid: def("page_invalid", 400, "page is negative, or size (or an aggregate's limit) is not between 1 and its maximum (reporting.maxPageSize)"),
  report_not_found: def("report_not_found", 404, "No job report available for the given jobId"),
  topic_not_found: def("topic_not_found", 404, "The customer has no such topic, or the password is not for it"),
  received_fax_not_found: def("received_fax_not_found", 404, "No such received fax document (unknown, another customer's, or deleted after its retention)"),
  route_not_found: def("route_not_found", 404, "No such endpoint"),
  preview_failed: def("preview_failed", 422, "The job's documents cannot be rendered; the message and failure reason say why"),
  fax_image_not_found: def("fax_image_not_found", 404, "The job has no rendered fax image (not rendered yet, failed before rendering, or purged)"),
  fax_image_page_not_found: def("fax_image_page_not_found", 404, "The fax image has no such page"),
  notification_not_found: def("notification_not_found", 404, "No such notification for this job"),
  notification_in_flight: def("notification_in_flight", 409, "The notification is being delivered right now; try again when this try has ended"),
  authentication_failed: def("authentication_failed", 401, "Bad or missing authentication"),
  customer_mismatch: def("customer_mismatch", 401, "The login does not belong to the customer number in the path"),
  ip_not_allowed: def("ip_not_allowed", 401, "The login may not be used from this IP address"),
  csrf_token_invalid: def("csrf_token_invalid", 403, "A console request that changes something lacks the session's X-CSRF-Token header"),
  manager_only: def("manager_only", 403, "Only a login that manages the account may change its settings"),
  too_many_streams: def("too_many_streams", 429, "This login has too many live-update streams open on this node"),
  operator_only: def("operator_only", 403, "Only an operator login may use this console page"),
  config_access_denied: def("config_access_denied", 403, "Only a login that manages its customer's account, or an operator, may use the configuration API"),
  config_operator_only: def("config_operator_only", 403, "Only an operator may give a customer a number or take one away"),
  customer_required: def("customer_required", 400, "An operator names the customer it configures (the customer query parameter)"),
  customer_not_found: def("customer_not_found", 404, "No such customer"),
  number_not_found: def("number_not_found", 404, "The customer has no such inbound number"),
  number_taken: def("number_taken", 409, "The number belongs to another customer"),
  resource_exists: def("resource_exists", 412, "If-None-Match: * asked to create it only, and it exists already"),
  profile_not_found: def("profile_not_found", 404, "The customer has no such profile"),
  user_not_found: def("user_not_found", 404, "The customer has no such mail-to-fax user"),
  user_taken: def("user_taken", 409, "The address is a mail-to-fax user of another customer"),
  domain_not_found: def("domain_not_found", 404, "The customer allows no such sender domain"),
  domain_taken: def("domain_taken", 409, "Another customer allows this sender domain"),
  profile_in_use: def("profile_in_use", 409, "Users still have this mail-to-fax profile"),
  setting_invalid: def("setting_invalid", 400, "An account setting has a value that cannot be used; the message says which and why"),
  too_many_auth_failures: def("too_many_auth_failures", 429, "Too many failed logins; wait before trying again"),
  job_already_completed: def("job_already_completed", 409, "The job has completed: every recipient is final, nothing is left to cancel"),
  duplicate_job: def("duplicate_job", 409, "Duplicate job: this Idempotency-Key was already used"),
  request_timeout: def("request_timeout", 408, "The request did not arrive completely in time"),
  payload_too_large: def("payload_too_large", 413, "The request body exceeds the configured limit"),
  path_too_long: def("path_too_long", 414, "A path segment of the request is longer than any identifier"),
  unsupported_media_type: def("unsupported_media_type", 415, "The request body must be application/json"),
  headers_too_large: def("headers_too_large", 431, "The request headers exceed the size limit"),
  service_unavailable: def("service_unavailable", 503, "The node is starting or shutting down"),
  store_unavailable: def("store_unavailable", 503, "The store cannot be reached right now; nothing was changed, retry after the time in Retry-After"),
  internal_error: def("internal_error", 500, "Internal server error"),
} as const satisfies Record<string, ApiErrorDefinition>;

export type ApiErrorCode = keyof typeof ApiErrors;

/** Thrown inside route handlers and turned into an error body by the API's error handler. */
export class ApiError extends Error {
  readonly definition: ApiErrorDefinition;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ApiErrorCode, message?: string, extra?: Record<string, unknown>) {
    const definition = ApiErrors[code];
    super(message ?? definition.title);
    this.name = "ApiError";
    this.definition = definition;
    this.extra = extra;
  }

  get status(): number {
    return this.definition.status;
  }

  toBody(): Record<string, unknown> {
    return { code: this.definition.status, error: this.definition.code, message: this.message, ...this.extra };
  }
}
