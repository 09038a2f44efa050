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
        this.toEnd();
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
      if (!this.delimited(delim, true)) return 'bad';
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
        return this.label(false);
      case 'b':
      case 't':
      case 'T':
      case 'v':
        return this.label(true);
      case 'a':
      case 'i':
      case 'c':
        // text to the end of the line; a backslash continues it
        while (this.i < this.n && this.script[this.i] !== '\n') this.i += this.script[this.i] === '\\' ? 2 : 1;
        return true;
      case 'r':
      case 'R':
        this.toEnd();
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
    if (!this.delimited(delim, command === 's') || !this.delimited(delim, false)) return false;
    if (command === 's') {
      // GNU sed skips blanks between flags: `s/a/b/ i w f` is the flags `i` and `w f`
      while (this.i < this.n && /[gpiImM0-9 \t]/.test(script[this.i]!)) this.i++;
      if (script[this.i] === 'e' || script[this.i] === 'w' || script[this.i] === 'W') return false;
    }
    return true;
  }

  /**
   * A label (`:a`, `b end`, `t`, `v 4.2`). GNU sed 4.9 ends it at a blank,
   * `;`, `}` or `#`, older seds at `;` or a newline only, so the checker
   * takes the label as the characters up to any of those and then accepts
   * only blanks and a `;`, a newline or the end: anything else (`:a e cmd`,
   * `ba}`, `ba#x`) would be read differently by some sed, and is unsafe.
   * `:` needs a name; `b`, `t`, `T` and `v` may go without.
   */
  private label(mayBeEmpty: boolean): boolean {
    const script = this.script;
    this.skipSpaces();
    const start = this.i;
    while (this.i < this.n && !/[\s;}#]/.test(script[this.i]!)) this.i++;
    if (this.i === start && !mayBeEmpty) return false;
    this.skipSpaces();
    return this.i >= this.n || script[this.i] === ';' || script[this.i] === '\n';
  }

  private skipSpaces(): void {
    while (this.i < this.n && (this.script[this.i] === ' ' || this.script[this.i] === '\t')) this.i++;
  }

  private digits(): void {
    while (isDigit(this.script[this.i])) this.i++;
  }

  /**
   * Skips to after the closing delimiter; false when there is none on this
   * line (GNU sed stops at an unescaped newline). In a regex (`regex`), a
   * bracket expression is skipped whole, as GNU sed does: the delimiter
   * inside `[...]` does not end it (`s/[/]/x/`).
   */
  private delimited(delim: string, regex: boolean): boolean {
    while (this.i < this.n) {
      const c = this.script[this.i]!;
      if (c === '\n') return false;
      this.i++;
      if (c === delim) return true;
      if (c === '\\') this.i++;
      else if (c === '[' && regex && !this.bracket()) return false;
    }
    return false;
  }

  /**
   * The rest of a bracket expression after its `[`, read as GNU sed reads
   * it: an optional `^`, a `]` first is literal, `[:class:]`, `[=x=]` and
   * `[.x.]` inside are skipped to their closing `:]`, `=]`, `.]`, a
   * backslash is an ordinary character, and the first other `]` closes it.
   * False when it does not close on this line.
   */
  private bracket(): boolean {
    const script = this.script;
    if (script[this.i] === '^') this.i++;
    if (script[this.i] === ']') this.i++;
    // 0: plain, 1: after a `[`, 2: inside `[:`, `[.` or `[=`, 3: after its closing `:`, `.` or `=`
    let state = 0;
    let opener = '';
    for (; this.i < this.n; this.i++) {
      const c = script[this.i]!;
      if (c === '\n') return false;
      if (c === '[') {
        if (state === 0) state = 1;
        continue;
      }
      if (c === ']' && state < 2) {
        this.i++;
        return true;
      }
      if (state === 1 && (c === ':' || c === '.' || c === '=')) {
        opener = c;
        state = 2;
      } else if (state === 2 && c === opener) state = 3;
      else if (state === 3 && c === ']') state = 0;
      else if (state === 1) state = 0;
      else if (state === 3) state = 2;
    }
    return false;
  }

  /** Skips to the end of the line. */
  private toEnd(): void {
    while (this.i < this.n && this.script[this.i] !== '\n') this.i++;
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
