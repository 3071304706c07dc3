/**
 * Entry point of the render worker thread (started by fax-image-worker.ts): renders one fax
 * image per request message and answers with the TIFF (its memory transferred, not copied) or
 * with the error's message. Requests come one at a time.
 */
import { parentPort } from "node:worker_threads";
import { renderFaxImage } from "./render-fax-image.ts";
import type { RenderReply, RenderRequest } from "./fax-image-worker.ts";

const port = parentPort;
if (port === null) throw new Error("render-worker.ts runs only as a worker thread");

port.on("message", (request: RenderRequest) => {
  renderFaxImage(request.input).then(
    ({ tiff, pageSizes }) => {
      const reply: RenderReply = { id: request.id, ok: true, tiff, pageSizes };
      // writeTiffF allocates the file in an ArrayBuffer of its own, so moving it moves nothing else.
      port.postMessage(reply, [tiff.buffer as ArrayBuffer]);
    },
    (err: unknown) => {
      const reply: RenderReply = { id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) };
      port.postMessage(reply);
    },
  );
});
