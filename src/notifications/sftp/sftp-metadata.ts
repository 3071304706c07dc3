/**
 * The metadata file that fax-to-SFTP writes beside each received fax's document, as JSON or XML.
 * Pure; no I/O.
 *
 * Its names follow the provider's fax-to-application output (docs.retarus.com, "XML file
 * format for Fax-to-Applications": the `FaxDetails` of its JSON and SOAP output, values as
 * strings, `DateReceived` as `yyyy-MM-dd'T'HH:mm:ssZ`), without the output's authentication
 * block and with the file named instead of embedded; `Topic` and `ReasonCode` are Faxline's
 * additions. Fields Faxline does not have (the answering CSID, billing code, archiving) are
 * left out rather than filled with guesses.
 *
 *   {"Fax":{"FaxDetails":{"JobID":"FI…","DateReceived":"2026-11-29T09:14:03+0000",…},
 *           "FaxFile":[{"FileType":"pdf","FileName":"20261129-091403_4930…_FI….pdf"}]}}
 */
import { escapeXml } from "../push/push-formats.ts";

export interface MetadataFacts {
  id: string;
  topic: string;
  receivedAt: number;
  calledNumber: string;
  callingNumber: string | null;
  remoteCsid: string | null;
  pages: number;
  status: string;
  reasonCode: string | null;
  resolution: string | null;
  durationSecs: number;
  bitRate: number | null;
}

/** `2026-11-29T09:14:03+0000`: the provider's DateReceived form, in UTC. */
export function providerTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}+0000`;
}

/** FaxDetails in order; null where the fax has no value. */
export function faxDetails(fax: MetadataFacts, fileType: "pdf" | "tiff"): Record<string, string | null> {
  return {
    JobID: fax.id,
    DateReceived: providerTimestamp(fax.receivedAt),
    CalledNumber: fax.calledNumber,
    CallingNumber: fax.callingNumber,
    RemoteCSID: fax.remoteCsid,
    Topic: fax.topic,
    FileType: fileType,
    Resolution: fax.resolution,
    TotalDuration: String(fax.durationSecs),
    BaudRate: fax.bitRate === null ? null : String(fax.bitRate),
    PageCount: String(fax.pages),
    Status: fax.status,
    ReasonCode: fax.reasonCode,
    Service: "Fax2SFTP",
  };
}

export function metadataFile(fax: MetadataFacts, documentFormat: "PDF" | "TIFF", documentName: string, format: "JSON" | "XML"): Buffer {
  const fileType = documentFormat === "PDF" ? "pdf" : "tiff";
  const details = faxDetails(fax, fileType);
  if (format === "JSON") return Buffer.from(`${JSON.stringify({ Fax: { FaxDetails: details, FaxFile: [{ FileType: fileType, FileName: documentName }] } }, null, 2)}\n`, "utf8");
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<Fax>", "  <FaxDetails>"];
  for (const [name, value] of Object.entries(details)) lines.push(value === null ? `    <${name}/>` : `    <${name}>${escapeXml(value)}</${name}>`);
  lines.push("  </FaxDetails>", "  <FaxFile>", `    <FileType>${fileType}</FileType>`, `    <FileName>${escapeXml(documentName)}</FileName>`, "  </FaxFile>", "</Fax>");
  return Buffer.from(`${lines.join("\n")}\n`, "utf8");
}
