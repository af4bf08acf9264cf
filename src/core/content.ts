/**
 * What a tool's result may carry beside its text: media a client shows, or hands to a model that
 * reads images or audio, and links to resources the client may fetch. The runtime passes them on
 * bounded (`observation/content.ts`); each transport maps them to its own form.
 */

/** An image or a sound, whole: its bytes in base64 and their media type. */
export interface MediaContent {
  type: "image" | "audio";
  /** The media type, `image/…` for an image and `audio/…` for a sound, e.g. `image/png`. */
  mime_type: string;
  /** The bytes, base64 (RFC 4648, with padding). */
  data: string;
}

/** A link to a resource the tool did not inline: where it is and what it is. */
export interface LinkContent {
  type: "link";
  /** An absolute URI, e.g. `file:///ws/report.pdf`. */
  uri: string;
  /** A short name for it. */
  name: string;
  title?: string;
  description?: string;
  mime_type?: string;
  /** Its size in bytes, when known. */
  size?: number;
}

export type ContentPart = MediaContent | LinkContent;
