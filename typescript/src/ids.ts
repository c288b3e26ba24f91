/** Ids as strings, bytes-exact: an id read from Redis that is not UTF-8 (only an older client
 * writes one) keeps its bytes as lone surrogates U+DC80..U+DCFF, as Python's "surrogateescape"
 * does, so that it can be completed by id (RWQ-ENC-006). New ids must be valid UTF-8. */
import { invalid } from "./errors.js";

/** Decodes bytes read from Redis into an id. */
export function decodeId(raw: Buffer): string {
  const text = raw.toString("utf8");
  if (!text.includes("\ufffd") || Buffer.from(text, "utf8").equals(raw)) return text;
  let out = "";
  let i = 0;
  while (i < raw.length) {
    const n = sequenceLength(raw, i);
    if (n === 0) {
      out += String.fromCharCode(0xdc00 + raw[i]!);
      i += 1;
    } else {
      out += raw.toString("utf8", i, i + n);
      i += n;
    }
  }
  return out;
}

/** The length of the valid UTF-8 sequence at raw[i], or 0. */
function sequenceLength(raw: Buffer, i: number): number {
  const b = raw[i]!;
  if (b < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b === 0xe0) lo = 0xa0;
    if (b === 0xed) hi = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b === 0xf0) lo = 0x90;
    if (b === 0xf4) hi = 0x8f;
  } else return 0;
  if (i + n > raw.length) return 0;
  const second = raw[i + 1]!;
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) {
    const c = raw[i + k]!;
    if (c < 0x80 || c > 0xbf) return 0;
  }
  return n;
}

/** Encodes an id into the bytes Redis holds; a lone surrogate other than an escaped byte is refused. */
export function encodeId(id: string, name = "id"): Buffer {
  if (id.isWellFormed()) return Buffer.from(id, "utf8");
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < id.length) {
      const d = id.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c < 0xdc80 || c > 0xdcff) throw invalid(`${name} must be UTF-8 (a lone surrogate is not)`);
      parts.push(Buffer.from(id.slice(start, i), "utf8"), Buffer.of(c - 0xdc00));
      start = i + 1;
    }
  }
  parts.push(Buffer.from(id.slice(start), "utf8"));
  return Buffer.concat(parts);
}

/** Whether an id holds no escaped byte: an id a new item may have (RWQ-ENC-001). */
export function isUtf8Id(id: string): boolean {
  return id.isWellFormed();
}
