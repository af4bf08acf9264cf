/**
 * What each JSON Schema `format` looks like, for error observations: the shape to say and an
 * example to copy (docs/observations.md: "since must be YYYY-MM-DD; received 3/5/26; example 2026-03-05").
 */
export const FORMAT_HINTS: Readonly<Record<string, { expected: string; example: string }>> = {
  date: { expected: "YYYY-MM-DD", example: "2026-03-05" },
  "date-time": { expected: "an RFC 3339 date-time YYYY-MM-DDTHH:MM:SSZ", example: "2026-03-05T14:30:00Z" },
  time: { expected: "HH:MM:SS with a zone offset", example: "14:30:00Z" },
  duration: { expected: "an ISO 8601 duration", example: "PT30M" },
  email: { expected: "an email address", example: "ada@example.com" },
  "idn-email": { expected: "an email address", example: "ada@example.com" },
  hostname: { expected: "a host name", example: "api.example.com" },
  "idn-hostname": { expected: "a host name", example: "api.example.com" },
  ipv4: { expected: "an IPv4 address", example: "192.0.2.10" },
  ipv6: { expected: "an IPv6 address", example: "2001:db8::10" },
  uri: { expected: "an absolute URI", example: "https://example.com/path" },
  "uri-reference": { expected: "a URI reference", example: "/path/to/item" },
  iri: { expected: "an absolute IRI", example: "https://example.com/path" },
  "iri-reference": { expected: "an IRI reference", example: "/path/to/item" },
  "uri-template": { expected: "a URI template", example: "https://example.com/items/{id}" },
  uuid: { expected: "a UUID", example: "123e4567-e89b-12d3-a456-426614174000" },
  "json-pointer": { expected: "a JSON Pointer", example: "/items/0/name" },
  "relative-json-pointer": { expected: "a relative JSON Pointer", example: "1/name" },
  regex: { expected: "a regular expression", example: "^[a-z]+$" },
};
