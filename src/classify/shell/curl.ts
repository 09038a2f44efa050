/**
 * What curl's URLs and `-w` format say, beyond its options (DESIGN.md §5.5,
 * §5.6; issue: fail closed by construction): only an http or https URL is
 * fetched by a read. Any other scheme (`dict:`, `gopher:`, `telnet:`,
 * `ldap:`, `smb:`, `mqtt:`, `file:` …) sends bytes to a service, often a
 * local one, so it is a write; so is a URL whose scheme is only known when
 * it runs, a URL curl globs into schemes (`{dict,http}://`), and a host curl
 * guesses another protocol from (`dict.example`, `ftp.example`). A `-w`
 * format with `%output{…}` writes a file, and `-w @file` reads a format that
 * may.
 */
import type { Effects } from './effects.js';
import type { ParsedArgs } from './parse-args.js';
import { SHELL_REASONS } from './reasons.js';
import type { Word } from './words.js';

/** A URL's scheme as curl reads it: letters before `://`. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** Hosts curl guesses a protocol other than http from, for a URL without a scheme. */
const GUESSED = /^(ftp|dict|ldap|imap|smtp|pop3)\./i;

/** A host (and port) curl fetches over http when the URL has no scheme: no globbing characters, no user part. */
const PLAIN_HOST = /^[A-Za-z0-9._-]+(:[0-9]*)?$/;

/** Whether curl fetches the URL over http or https, known before it runs; false when it may be anything else. */
function isHttpUrl(word: Word): boolean {
  const text = word.text ?? word.prefix ?? '';
  const scheme = SCHEME.exec(text);
  if (scheme !== null) return ['http', 'https'].includes(scheme[1]!.toLowerCase());
  if (word.text === null || text.includes('://')) return false;
  const host = text.split(/[/?#]/, 1)[0]!;
  return PLAIN_HOST.test(host) && !GUESSED.test(host);
}

/** Whether a `-w` format can write a file: `%output{…}`, a format read from a file (`@file`), or one only known when it runs. */
function writeOutWrites(value: Word | undefined): boolean {
  const text = value?.text;
  if (text == null || value!.pattern) return true;
  return text.startsWith('@') || /%output\{/i.test(text);
}

/**
 * Notes into `effects` what curl's URLs (its operands and `--url` values)
 * and its `-w`/`--write-out` formats do: a URL that is not http or https,
 * or not known to be, and a format that can write a file, are writes.
 */
export function checkCurl(effects: Effects, args: ParsedArgs): void {
  const label = effects.label;
  const urls = [...args.operands];
  for (const option of args.options) {
    if (option.names.includes('--url')) urls.push(option.value ?? { text: null, optionLike: false, pattern: false });
    if ((option.names.includes('-w') || option.names.includes('--write-out')) && writeOutWrites(option.value)) {
      effects.writes.push(SHELL_REASONS['curl-write-out'](`${label} ${option.name}`));
    }
  }
  const other = urls.find((url) => !isHttpUrl(url));
  if (other !== undefined) effects.writes.push(SHELL_REASONS['curl-url-scheme'](label, other.text ?? `${other.prefix ?? ''}…`));
}
