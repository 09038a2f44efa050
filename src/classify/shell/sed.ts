/**
 * A checker of sed scripts (GNU sed 4 syntax), so that `sed -n '1,20p' f`
 * is a read (DESIGN.md §5.5): a script only prints unless it can write a
 * file (`w`, `W`, `s///w`) or run a command (`e`, `s///e`). It reads
 * addresses and commands just enough to find those; anything it does not
 * know, or that is malformed, counts as unsafe.
 */

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** One pass over a sed script; `i` is the index of the next character to read. */
class SedScanner {
  private i = 0;
  private readonly n: number;

  constructor(private readonly script: string) {
    this.n = script.length;
  }

  /** Whether every command of the script only prints. */
  safe(): boolean {
    const script = this.script;
    for (;;) {
      while (this.i < this.n && /[\s;]/.test(script[this.i]!)) this.i++;
      if (this.i >= this.n) return true;
      if (script[this.i] === '#') {
        this.toEnd(false);
        continue;
      }
      if (!this.addresses()) return false;
      this.skipSpaces();
      while (script[this.i] === '!') {
        this.i++;
        this.skipSpaces();
      }
      const command = script[this.i];
      this.i++;
      if (!this.command(command)) return false;
    }
  }

  /** A command's addresses: none, one, or a range (`a,b`, `a,+N`, `a,~N`); false when malformed. */
  private addresses(): boolean {
    const first = this.address();
    if (first === 'bad') return false;
    if (!first) return true;
    this.skipSpaces();
    if (this.script[this.i] !== ',') return true;
    this.i++;
    this.skipSpaces();
    if (this.script[this.i] === '+' || this.script[this.i] === '~') {
      this.i++;
      if (!isDigit(this.script[this.i])) return false;
      this.digits();
      return true;
    }
    return this.address() === true;
  }

  /** One address (`N`, `first~step`, `$`, `/re/`, `\cREc` with flags); false when there is none here, 'bad' when malformed. */
  private address(): boolean | 'bad' {
    const script = this.script;
    const c = script[this.i];
    if (isDigit(c)) {
      this.digits();
      if (script[this.i] === '~') {
        this.i++;
        this.digits();
      }
      return true;
    }
    if (c === '$') {
      this.i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      let delim = '/';
      if (c === '\\') {
        delim = script[this.i + 1] ?? '';
        if (delim === '' || delim === '\n' || delim === '\\') return 'bad';
        this.i++;
      }
      this.i++;
      if (!this.delimited(delim)) return 'bad';
      while (script[this.i] === 'I' || script[this.i] === 'M') this.i++;
      return true;
    }
    return false;
  }

  /** The rest of a command after its letter; false when it writes, runs a program, is unknown or malformed. */
  private command(command: string | undefined): boolean {
    switch (command) {
      case '{':
      case '}':
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
        return true;
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        this.skipSpaces();
        this.digits();
        return true;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        this.toEnd(true);
        return true;
      case 'a':
      case 'i':
      case 'c':
        // text to the end of the line; a backslash continues it
        while (this.i < this.n && this.script[this.i] !== '\n') this.i += this.script[this.i] === '\\' ? 2 : 1;
        return true;
      case 'r':
      case 'R':
        this.toEnd(false);
        return true;
      case 's':
      case 'y':
        return this.substitution(command);
      default:
        return false; // w, W, e, and anything unknown
    }
  }

  /** `s/re/text/flags` or `y/abc/xyz/`; false when malformed or with a `w` or `e` flag. */
  private substitution(command: 's' | 'y'): boolean {
    const script = this.script;
    const delim = script[this.i];
    if (delim === undefined || delim === '\n' || delim === '\\') return false;
    this.i++;
    if (!this.delimited(delim) || !this.delimited(delim)) return false;
    if (command === 's') {
      while (this.i < this.n && /[gpiImM0-9]/.test(script[this.i]!)) this.i++;
      if (script[this.i] === 'e' || script[this.i] === 'w' || script[this.i] === 'W') return false;
    }
    return true;
  }

  private skipSpaces(): void {
    while (this.i < this.n && (this.script[this.i] === ' ' || this.script[this.i] === '\t')) this.i++;
  }

  private digits(): void {
    while (isDigit(this.script[this.i])) this.i++;
  }

  /** Skips to after the closing delimiter; false when there is none. */
  private delimited(delim: string): boolean {
    while (this.i < this.n) {
      const c = this.script[this.i]!;
      if (c === '\\') {
        this.i += 2;
        continue;
      }
      this.i++;
      if (c === delim) return true;
    }
    return false;
  }

  /** Skips to the end of the line (`alsoSemicolon`: or to the next `;`). */
  private toEnd(alsoSemicolon: boolean): void {
    while (this.i < this.n && this.script[this.i] !== '\n' && !(alsoSemicolon && this.script[this.i] === ';')) this.i++;
  }
}

/**
 * Whether a sed script only prints: no `w`/`W` (write a file), `e` (run a
 * command), `s///w` or `s///e`, and nothing this checker does not know
 * (GNU sed 4 syntax). Anything unknown or malformed counts as unsafe.
 */
export function isSafeSedScript(script: string): boolean {
  return new SedScanner(script).safe();
}
