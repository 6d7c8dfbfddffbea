import { profaneWords } from './profanity';
import type { EngineInput } from './types';

/** Metadata deeper than this is not walked (JSON from clients is shallow; this only guards against abuse). */
const MAX_METADATA_DEPTH = 16;

/** Bare links (`www.…`) and http(s) links; only the authority part is captured, which is all links rules need. */
const LINK_IN_TEXT = /\b(?:https?:\/\/|www\.)(?:\[[0-9a-f:.]+\]|[^\s/?#<>"'`()[\]{}|\\^,;!*]+)/giu;

/** What local checks read of a record: sent to the worker that runs them. */
export type ContentInput = Pick<EngineInput, 'name' | 'text' | 'imageUrls' | 'externalUrls' | 'metadata'>;

/**
 * The parts of one record that rules judge: name, text and every string in metadata (recursively), each field kept
 * apart so that a pattern or phrase never matches across two fields. Derived views are computed on first use only.
 */
export class Content {
  readonly fields: readonly string[];
  private linkHosts?: ReadonlySet<string>;
  private profaneFound?: readonly string[];
  private readonly hiddenSpans: { start: number; end: number }[] = [];

  /** Every string in metadata (recursively), in order. */
  readonly metadataStrings: readonly string[];

  constructor(private readonly input: ContentInput) {
    const strings: string[] = [];
    if (input.metadata) collectStrings(input.metadata, strings, 0);
    this.metadataStrings = strings;
    this.fields = [...[input.name, input.text].filter((field) => field.length > 0), ...strings];
  }

  /** Host names (lower case, punycode, no trailing dot) of every link in the fields, externalUrls and imageUrls. */
  get hosts(): ReadonlySet<string> {
    if (!this.linkHosts) {
      const hosts = new Set<string>();
      for (const field of this.fields) hostsInText(field, hosts);
      for (const url of [...this.input.externalUrls, ...this.input.imageUrls]) {
        const host = hostOf(url);
        if (host) hosts.add(host);
        else hostsInText(url, hosts);
      }
      this.linkHosts = hosts;
    }
    return this.linkHosts;
  }

  /** Profane words in the fields, found once per record however many strategies ask (about 0.5 ms per 1,000 chars). */
  get profane(): readonly string[] {
    this.profaneFound ??= profaneWords(this.fields);
    return this.profaneFound;
  }

  /** The record's text alone (the field whose spans `pii` strategies report, and mask). */
  get text(): string {
    return this.input.text;
  }

  /** The record's name alone. */
  get name(): string {
    return this.input.name;
  }

  /** Spans of the text that a masking strategy asks to hide from the masked copy (see `pii`). */
  hide(spans: readonly { start: number; end: number }[]): void {
    for (const { start, end } of spans) this.hiddenSpans.push({ start, end });
  }

  get hidden(): readonly { start: number; end: number }[] {
    return this.hiddenSpans;
  }

  /** What an external provider judges: every field, one per line. */
  get forProvider(): string {
    return this.fields.join('\n');
  }
}

function collectStrings(value: unknown, into: string[], depth: number): void {
  if (typeof value === 'string') {
    if (value.length > 0) into.push(value);
  } else if (depth < MAX_METADATA_DEPTH && typeof value === 'object' && value !== null) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) collectStrings(item, into, depth + 1);
  }
}

function hostsInText(text: string, into: Set<string>): void {
  for (const match of text.matchAll(LINK_IN_TEXT)) {
    const link = match[0];
    const host = hostOf(/^www\./i.test(link) ? `http://${link}` : link);
    if (host) into.add(host);
  }
}

/** The normalised host of an absolute http(s) URL, or undefined when it is not one. */
export function hostOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  return parsed.hostname.replace(/\.+$/, '') || undefined;
}
