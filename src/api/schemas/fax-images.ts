/**
 * Schemas of the fax image extension (routes/v1/fax-images.ts): the pages of a rendered job with
 * their preflight, and the preview of a job request.
 */
import { Type, type Static } from "typebox";

export const PagePreflightSchema = Type.Object({
  page: Type.Integer({ description: "1-based page number; the cover page, if any, is page 1" }),
  encodedBytes: Type.Integer({ description: "CCITT G4 bytes of the page" }),
  estimatedSeconds: Type.Number({ description: "Estimated line time of the page at 14.4 kbit/s" }),
  blackRatio: Type.Number({ description: "Share of black pixels, 0 to 1" }),
  blank: Type.Boolean(),
  tooDark: Type.Boolean(),
  large: Type.Boolean({ description: "Estimated line time above render.largePageSeconds" }),
  warnings: Type.Array(Type.String()),
});
export type PagePreflightView = Static<typeof PagePreflightSchema>;

export const FaxImageSchema = Type.Object({
  imageId: Type.String(),
  recipients: Type.Array(Type.String(), { description: "Numbers of the recipients this image is sent to" }),
  paperFormat: Type.String(),
  resolution: Type.String(),
  sizeBytes: Type.Integer({ description: "Bytes of the TIFF-F file" }),
  estimatedSeconds: Type.Number({ description: "Estimated line time of all pages at 14.4 kbit/s" }),
  tiffUrl: Type.String(),
  pages: Type.Array(Type.Intersect([PagePreflightSchema, Type.Object({ pngUrl: Type.String() })])),
});

export const JobFaxImagesSchema = Type.Object({
  jobId: Type.String(),
  images: Type.Array(FaxImageSchema),
});

export const FaxPreviewSchema = Type.Object({
  recipient: Type.String({ description: "The recipient the preview is rendered for (the first of the request)" }),
  paperFormat: Type.String(),
  resolution: Type.String(),
  sizeBytes: Type.Integer(),
  estimatedSeconds: Type.Number(),
  pages: Type.Array(Type.Intersect([PagePreflightSchema, Type.Object({ png: Type.String({ description: "The page as a PNG, base64" }) })])),
});
