/**
 * What the PowerShell classifier knows about commands, as data (DESIGN.md
 * §5.5): aliases, the verbs and cmdlets that only read, the cmdlets whose
 * arguments name paths (with their parameters, so that the positional
 * operand is found), and the few cmdlets that are worse than their verb.
 * Names are lower case; PowerShell compares them without case.
 */

/** Aliases (and the functions PowerShell defines by default) to the cmdlet they run. */
export const ALIASES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    rd: 'remove-item',
    rmdir: 'remove-item',
    del: 'remove-item',
    rm: 'remove-item',
    erase: 'remove-item',
    ri: 'remove-item',
    mv: 'move-item',
    move: 'move-item',
    mi: 'move-item',
    cp: 'copy-item',
    copy: 'copy-item',
    cpi: 'copy-item',
    ni: 'new-item',
    md: 'new-item',
    mkdir: 'new-item',
    sc: 'set-content',
    ac: 'add-content',
    iex: 'invoke-expression',
    iwr: 'invoke-webrequest',
    curl: 'invoke-webrequest',
    wget: 'invoke-webrequest',
    irm: 'invoke-restmethod',
    icm: 'invoke-command',
    ls: 'get-childitem',
    dir: 'get-childitem',
    gci: 'get-childitem',
    cat: 'get-content',
    type: 'get-content',
    gc: 'get-content',
    pwd: 'get-location',
    gl: 'get-location',
    echo: 'write-output',
    write: 'write-output',
    select: 'select-object',
    where: 'where-object',
    '?': 'where-object',
    sort: 'sort-object',
    measure: 'measure-object',
    group: 'group-object',
    fl: 'format-list',
    ft: 'format-table',
    fw: 'format-wide',
    gi: 'get-item',
    gp: 'get-itemproperty',
    ps: 'get-process',
    gps: 'get-process',
    gm: 'get-member',
    gcm: 'get-command',
    gal: 'get-alias',
    gv: 'get-variable',
    sls: 'select-string',
    diff: 'compare-object',
    compare: 'compare-object',
    help: 'get-help',
    man: 'get-help',
    cd: 'set-location',
    chdir: 'set-location',
    sl: 'set-location',
    pushd: 'push-location',
    popd: 'pop-location',
    '%': 'foreach-object',
    foreach: 'foreach-object',
    tee: 'tee-object',
    kill: 'stop-process',
    spps: 'stop-process',
    start: 'start-process',
    saps: 'start-process',
    sleep: 'start-sleep',
    cls: 'clear-host',
    clc: 'clear-content',
    ii: 'invoke-item',
    sp: 'set-itemproperty',
    si: 'set-item',
    sv: 'set-variable',
    set: 'set-variable',
  }),
);

/**
 * Aliases PowerShell does not define outside Windows, where the name runs
 * the native program instead: a read is judged both ways.
 */
export const UNIX_SHADOWED: ReadonlySet<string> = new Set([
  'ls',
  'cat',
  'cp',
  'mv',
  'rm',
  'rmdir',
  'ps',
  'sort',
  'diff',
  'tee',
  'sleep',
  'kill',
  'man',
  'mount',
  'write',
  'compare',
  'start',
  'ac',
]);

/** Verbs whose every cmdlet only reads (`Get-`, `Test-`, ...), except those in `NOT_READ`. */
export const READ_VERBS: ReadonlySet<string> = new Set([
  'get',
  'test',
  'select',
  'measure',
  'resolve',
  'find',
  'compare',
  'sort',
  'where',
  'group',
  'convert',
  'convertto',
  'convertfrom',
]);

/** Cmdlets of other verbs that only read or compute. */
export const READ_CMDLETS: ReadonlySet<string> = new Set([
  'out-string',
  'out-host',
  'out-null',
  'out-default',
  'write-output',
  'write-host',
  'write-verbose',
  'write-warning',
  'write-debug',
  'write-information',
  'format-table',
  'format-list',
  'format-wide',
  'format-custom',
  'format-hex',
  'foreach-object',
  'join-path',
  'split-path',
]);

/** Cmdlets of a read verb that are not reads: they ask the user, or repair what they test. */
export const NOT_READ: ReadonlySet<string> = new Set(['get-credential', 'test-computersecurechannel']);

/** Cmdlets that only change the current location (a read without targets). */
export const LOCATION_CMDLETS: ReadonlySet<string> = new Set(['set-location', 'push-location', 'pop-location']);

/** Cmdlets that destroy whatever their arguments: disks, partitions, the recycle bin. */
export const DESTRUCTIVE_CMDLETS: ReadonlySet<string> = new Set([
  'format-volume',
  'clear-disk',
  'initialize-disk',
  'remove-partition',
  'clear-recyclebin',
]);

/** Cmdlets that honour `-WhatIf` (only describe what they would do). */
export const WHATIF_CMDLETS: ReadonlySet<string> = new Set([
  'remove-item',
  'set-content',
  'add-content',
  'clear-content',
  'new-item',
  'copy-item',
  'move-item',
  'rename-item',
  'out-file',
  'set-item',
  'clear-item',
  'set-itemproperty',
  'remove-itemproperty',
  'stop-process',
]);

/** Cmdlets that run script blocks or take property expressions: an argument only known when it runs may be code. */
export const SCRIPT_CMDLETS: ReadonlySet<string> = new Set([
  'foreach-object',
  'where-object',
  'sort-object',
  'select-object',
  'group-object',
  'measure-object',
  'measure-command',
  'compare-object',
  'format-table',
  'format-list',
  'format-wide',
  'format-custom',
]);

/** Words that start a statement PowerShell does not run as a command. */
export const KEYWORDS: ReadonlySet<string> = new Set(
  (
    'begin break catch class clean configuration continue data define do dynamicparam else elseif end enum exit filter finally for ' +
    'foreach from function hidden if in inlinescript parallel param process return sequence static switch throw trap try until using var while workflow'
  ).split(' '),
);

/** The parameters every cmdlet has (and their aliases): switches, then those with a value. */
const COMMON_SWITCHES = ['verbose', 'vb', 'debug', 'db', 'whatif', 'wi', 'confirm', 'cf'];
const COMMON_VALUES = [
  'erroraction',
  'ea',
  'warningaction',
  'wa',
  'informationaction',
  'infa',
  'progressaction',
  'proga',
  'errorvariable',
  'ev',
  'warningvariable',
  'wv',
  'informationvariable',
  'iv',
  'outvariable',
  'ov',
  'outbuffer',
  'ob',
  'pipelinevariable',
  'pv',
];

/** How a cmdlet's arguments name paths: its parameters, which of them are paths, and what each positional operand is. */
export interface PathSpec {
  switches: ReadonlySet<string>;
  values: ReadonlySet<string>;
  /** Value parameters that name a path target. */
  paths: ReadonlySet<string>;
  /** What the positional operands are, in order; one past the list is not known. */
  positional: readonly ('path' | 'other')[];
}

const PATH_PARAMS = ['path', 'literalpath', 'lp', 'pspath'];
const FILTERS = ['filter', 'include', 'exclude'];

function spec(switches: string[], values: string[], positional: PathSpec['positional'], paths = PATH_PARAMS): PathSpec {
  return {
    switches: new Set([...switches, ...COMMON_SWITCHES]),
    values: new Set([...values, ...paths, ...COMMON_VALUES]),
    paths: new Set(paths),
    positional,
  };
}

const CONTENT_WRITE = spec(
  ['force', 'nonewline', 'passthru', 'asbytestream'],
  ['value', 'encoding', 'stream', ...FILTERS],
  ['path', 'other'],
);
const COPY_MOVE = spec(
  ['recurse', 'force', 'container', 'passthru'],
  ['credential', 'tosession', 'fromsession', ...FILTERS],
  ['path', 'path'],
  [...PATH_PARAMS, 'destination'],
);

/** The cmdlets whose arguments name paths (targets), by name. */
export const PATH_CMDLETS: ReadonlyMap<string, PathSpec> = new Map([
  [
    'get-childitem',
    spec(
      [
        'recurse',
        'r',
        'force',
        'name',
        'directory',
        'ad',
        'd',
        'file',
        'af',
        'hidden',
        'ah',
        'h',
        'readonly',
        'ar',
        'system',
        'as',
        'followsymlink',
      ],
      ['depth', 'attributes', ...FILTERS],
      ['path', 'other'],
    ),
  ],
  [
    'get-content',
    spec(
      ['raw', 'force', 'asbytestream', 'wait'],
      ['readcount', 'totalcount', 'head', 'first', 'tail', 'last', 'encoding', 'delimiter', 'stream', ...FILTERS],
      ['path'],
    ),
  ],
  ['get-item', spec(['force'], ['stream', ...FILTERS], ['path'])],
  ['get-itemproperty', spec([], ['name', ...FILTERS], ['path', 'other'])],
  ['test-path', spec(['isvalid'], ['pathtype', 'type', 'olderthan', 'newerthan', ...FILTERS], ['path'])],
  ['resolve-path', spec(['relative'], ['relativebasepath'], ['path'])],
  [
    'select-string',
    spec(
      ['simplematch', 'casesensitive', 'allmatches', 'notmatch', 'quiet', 'list', 'raw', 'noemphasis'],
      ['pattern', 'encoding', 'context', 'include', 'exclude'],
      ['other', 'path'],
    ),
  ],
  ['get-filehash', spec([], ['algorithm'], ['path'])],
  ['format-hex', spec(['raw'], ['encoding', 'count', 'offset'], ['path'])],
  ['set-location', spec(['passthru'], ['stackname'], ['path'])],
  ['push-location', spec(['passthru'], ['stackname'], ['path'])],
  ['remove-item', spec(['recurse', 'force'], ['stream', 'credential', ...FILTERS], ['path'])],
  ['copy-item', COPY_MOVE],
  ['move-item', COPY_MOVE],
  ['rename-item', spec(['force', 'passthru'], ['newname', 'credential'], ['path', 'other'])],
  ['new-item', spec(['force'], ['name', 'itemtype', 'type', 'value', 'credential'], ['path'])],
  ['set-content', CONTENT_WRITE],
  ['add-content', CONTENT_WRITE],
  ['clear-content', CONTENT_WRITE],
  [
    'out-file',
    spec(['append', 'force', 'noclobber', 'nonewline'], ['encoding', 'width', 'inputobject'], ['path'], [...PATH_PARAMS, 'filepath']),
  ],
  ['tee-object', spec(['append'], ['variable', 'encoding', 'inputobject'], ['path'], [...PATH_PARAMS, 'filepath'])],
  [
    'invoke-webrequest',
    spec(
      ['usebasicparsing', 'usedefaultcredentials', 'passthru', 'skipcertificatecheck'],
      ['uri', 'method', 'body', 'headers', 'contenttype', 'infile', 'timeoutsec', 'useragent', 'credential'],
      ['other'],
      ['outfile'],
    ),
  ],
]);

/** The parameters of any `Export-*` cmdlet that name the file it writes, and its first positional operand. */
export const EXPORT_SPEC: PathSpec = spec([], [], ['path'], [...PATH_PARAMS, 'filepath']);
