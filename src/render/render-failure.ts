/**
 * The failure reasons (errors/failure-reasons.ts) that rendering a document can end a job with.
 * Each carries a message naming the document and what is wrong with it.
 */
import type { FailureReasonCode } from "../errors/failure-reasons.ts";

export type RenderFailureCode = Extract<
  FailureReasonCode,
  "document_type_unsupported" | "document_type_unavailable" | "document_unreadable" | "document_encrypted" | "document_too_large" | "document_blank"
>;
