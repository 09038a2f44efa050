/**
 * The check every options object of this library makes: a key it does not
 * know is a mistake (`guardOptions` for `guard`), refused rather than
 * silently ignored.
 */

/**
 * Throws when `options` has an own key outside `known`.
 * @throws TypeError `<where>: options.<key> is not an option (the options are <known>)`.
 */
export function assertKnownKeys(options: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${where}: options.${key} is not an option (the options are ${known.join(', ')})`);
  }
}
