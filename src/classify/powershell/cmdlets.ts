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

/**
 * Verbs of read-looking cmdlets, used only to word the reason a cmdlet of
 * such a verb not in `READ_CMDLETS` is a write (`Get-WindowsUpdate
 * -Install` is a module's cmdlet): a verb proves nothing.
 */
export const READ_LOOKING_VERBS: ReadonlySet<string> = new Set([
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
  'format',
  'out',
  'write',
]);

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
/** The common parameters that assign a variable of the session (and their aliases): not taken by a read (the classifier tracks no variables). */
const VARIABLE_PARAMETER_NAMES = [
  'errorvariable',
  'ev',
  'warningvariable',
  'wv',
  'informationvariable',
  'iv',
  'outvariable',
  'ov',
  'pipelinevariable',
  'pv',
];

/** The common parameters that assign a variable of the session, as a set. */
export const VARIABLE_PARAMETERS: ReadonlySet<string> = new Set(VARIABLE_PARAMETER_NAMES);

const COMMON_VALUES = [
  'erroraction',
  'ea',
  'warningaction',
  'wa',
  'informationaction',
  'infa',
  'progressaction',
  'proga',
  'outbuffer',
  'ob',
  ...VARIABLE_PARAMETER_NAMES,
];

/** How a cmdlet's arguments name paths: its parameters, which of them are paths, and what each positional operand is. */
export interface PathSpec {
  switches: ReadonlySet<string>;
  values: ReadonlySet<string>;
  /** Value parameters that name a path target. */
  paths: ReadonlySet<string>;
  /** What the positional operands are, in order; one past the list is not known unless `more`. */
  positional: readonly ('path' | 'other')[];
  /** Operands past `positional` are taken as 'other' (a parameter that takes the remaining arguments). */
  more: boolean;
}

const PATH_PARAMS = ['path', 'literalpath', 'lp', 'pspath'];
const FILTERS = ['filter', 'include', 'exclude'];

function spec(switches: string[], values: string[], positional: PathSpec['positional'], paths = PATH_PARAMS): PathSpec {
  return {
    switches: new Set([...switches, ...COMMON_SWITCHES]),
    values: new Set([...values, ...paths, ...COMMON_VALUES]),
    paths: new Set(paths),
    positional,
    more: false,
  };
}

/** A read cmdlet naming no paths: its switches, its value parameters, its positional operands (`more`: any number). */
function plain(switches: string[], values: string[], positional = 0, more = false): PathSpec {
  return { ...spec(switches, values, Array<'other'>(positional).fill('other'), []), more };
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
  ['get-filehash', spec([], ['algorithm', 'inputstream'], ['path'])],
  ['format-hex', spec(['raw'], ['encoding', 'count', 'offset', 'inputobject'], ['path'])],
  ['get-acl', spec(['audit', 'allcentralaccesspolicies'], ['inputobject', ...FILTERS], ['path'])],
  ['get-itempropertyvalue', spec([], ['name', ...FILTERS], ['path', 'other'])],
  ['convert-path', spec([], [], ['path'])],
  ['select-xml', spec([], ['xpath', 'namespace', 'content', 'xml'], ['other', 'path'])],
  ['test-json', spec([], ['json', 'schema', 'options'], ['other', 'other'], [...PATH_PARAMS, 'schemafile'])],
  [
    'get-winevent',
    spec(
      ['force', 'oldest'],
      ['logname', 'listlog', 'listprovider', 'providername', 'maxevents', 'computername', 'credential', 'filterxpath', 'filterxml'],
      ['other'],
    ),
  ],
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

const WHERE_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'like',
  'notlike',
  'match',
  'notmatch',
  'contains',
  'notcontains',
  'in',
  'notin',
];
const FORMAT = ['force', 'showerror', 'displayerror'];
const FORMAT_VALUES = ['property', 'groupby', 'view', 'expand', 'inputobject'];
const WRITE_STREAM = plain([], ['message'], 1);

/** Read cmdlets that name no paths, with their parameters (built-ins of PowerShell 7 and Windows PowerShell 5.1). */
const PLAIN_READS: [string, PathSpec][] = [
  ['get-location', plain(['stack'], ['psprovider', 'psdrive', 'stackname'])],
  ['get-process', plain(['module', 'fileversioninfo', 'includeusername'], ['name', 'id', 'inputobject', 'computername'], 1)],
  [
    'get-service',
    plain(['dependentservices', 'requiredservices'], ['name', 'displayname', 'include', 'exclude', 'inputobject', 'computername'], 1),
  ],
  [
    'get-date',
    plain(
      ['asutc'],
      ['date', 'year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'displayhint', 'format', 'uformat', 'unixtimeseconds'],
      1,
    ),
  ],
  [
    'get-command',
    plain(
      ['syntax', 'showcommandinfo', 'all', 'listimported', 'usefuzzymatching', 'useabbreviationexpansion'],
      ['name', 'verb', 'noun', 'module', 'fullyqualifiedmodule', 'commandtype', 'totalcount', 'parametername', 'parametertype'],
      1,
    ),
  ],
  ['get-help', plain(['full', 'detailed', 'examples'], ['name', 'path', 'category', 'component', 'functionality', 'role', 'parameter'], 1)],
  ['get-module', plain(['all', 'listavailable', 'refresh', 'skipeditioncheck'], ['name', 'fullyqualifiedname', 'psedition'], 1)],
  ['get-variable', plain(['valueonly'], ['name', 'include', 'exclude', 'scope'], 1)],
  ['get-member', plain(['static', 'force'], ['name', 'inputobject', 'membertype', 'view'], 1)],
  ['get-alias', plain([], ['name', 'exclude', 'scope', 'definition'], 1)],
  ['get-psdrive', plain([], ['name', 'literalname', 'scope', 'psprovider'], 1)],
  ['get-psprovider', plain([], ['psprovider'], 1)],
  ['get-host', plain([], [])],
  ['get-culture', plain(['listavailable', 'nouseroverrides'], ['name'], 1)],
  ['get-uiculture', plain([], [])],
  ['get-timezone', plain(['listavailable'], ['name', 'id'], 1)],
  ['get-random', plain(['shuffle'], ['maximum', 'minimum', 'inputobject', 'count', 'setseed'], 1)],
  ['get-uptime', plain(['since'], [])],
  ['get-computerinfo', plain([], ['property'], 1)],
  ['get-executionpolicy', plain(['list'], ['scope'])],
  ['get-unique', plain(['asstring', 'ontype', 'caseinsensitive'], ['inputobject'])],
  ['get-verb', plain([], ['verb', 'group'], 1)],
  [
    'get-netipaddress',
    plain(
      ['includeallcompartments'],
      ['ipaddress', 'interfaceindex', 'interfacealias', 'addressfamily', 'type', 'prefixlength', 'prefixorigin', 'suffixorigin'],
      1,
    ),
  ],
  [
    'get-nettcpconnection',
    plain([], ['localaddress', 'localport', 'remoteaddress', 'remoteport', 'state', 'appliedsetting', 'owningprocess'], 2),
  ],
  [
    'get-ciminstance',
    plain(
      ['keyonly', 'shallow'],
      ['classname', 'filter', 'property', 'namespace', 'query', 'querydialect', 'computername', 'operationtimeoutsec'],
      1,
    ),
  ],
  [
    'get-eventlog',
    plain(
      ['asbaseobject', 'list', 'asstring'],
      ['logname', 'instanceid', 'computername', 'newest', 'after', 'before', 'username', 'index', 'entrytype', 'source', 'message'],
      2,
    ),
  ],
  [
    'select-object',
    plain(
      ['unique', 'wait', 'caseinsensitive'],
      ['property', 'excludeproperty', 'expandproperty', 'first', 'last', 'skip', 'skiplast', 'index', 'skipindex', 'inputobject'],
      1,
    ),
  ],
  [
    'measure-object',
    plain(
      ['sum', 'average', 'maximum', 'minimum', 'standarddeviation', 'allstats', 'line', 'word', 'character', 'ignorewhitespace'],
      ['property', 'inputobject'],
      1,
    ),
  ],
  ['measure-command', plain([], ['expression', 'inputobject'], 1)],
  ['sort-object', plain(['descending', 'unique', 'casesensitive', 'stable'], ['property', 'inputobject', 'culture', 'top', 'bottom'], 1)],
  [
    'where-object',
    plain(
      [...WHERE_OPERATORS.flatMap((op) => [op, `c${op}`, `i${op}`]), 'is', 'isnot', 'not'],
      ['filterscript', 'property', 'value', 'inputobject'],
      2,
    ),
  ],
  ['group-object', plain(['noelement', 'ashashtable', 'asstring', 'casesensitive'], ['property', 'inputobject', 'culture'], 1)],
  [
    'compare-object',
    plain(
      ['excludedifferent', 'includeequal', 'passthru', 'casesensitive'],
      ['referenceobject', 'differenceobject', 'syncwindow', 'property', 'culture'],
      2,
    ),
  ],
  ['convertto-json', plain(['compress', 'enumsasstrings', 'asarray'], ['inputobject', 'depth', 'escapehandling'], 1)],
  ['convertfrom-json', plain(['ashashtable', 'noenumerate'], ['inputobject', 'depth', 'datekind'], 1)],
  [
    'convertto-csv',
    plain(
      ['useculture', 'includetypeinformation', 'notypeinformation', 'noheader'],
      ['inputobject', 'delimiter', 'quotefields', 'usequotes'],
      2,
    ),
  ],
  ['convertfrom-csv', plain(['useculture'], ['inputobject', 'delimiter', 'header'], 2)],
  [
    'convertto-html',
    plain(
      ['fragment', 'transitional'],
      ['property', 'head', 'title', 'body', 'precontent', 'postcontent', 'as', 'cssuri', 'inputobject', 'meta', 'charset'],
      1,
    ),
  ],
  ['convertto-xml', plain(['notypeinformation'], ['inputobject', 'depth', 'as'], 1)],
  ['convertfrom-stringdata', plain([], ['stringdata', 'delimiter'], 1)],
  ['convertfrom-sddlstring', plain([], ['sddl', 'type'], 1)],
  ['format-table', plain(['autosize', 'hidetableheaders', 'wrap', 'repeatheader', ...FORMAT], FORMAT_VALUES, 1)],
  ['format-list', plain(FORMAT, FORMAT_VALUES, 1)],
  ['format-wide', plain(['autosize', ...FORMAT], ['column', ...FORMAT_VALUES], 1)],
  ['format-custom', plain(FORMAT, ['depth', ...FORMAT_VALUES], 1)],
  ['out-string', plain(['stream', 'nonewline'], ['inputobject', 'width'])],
  ['out-host', plain(['paging'], ['inputobject'])],
  ['out-null', plain([], ['inputobject'])],
  ['out-default', plain(['transcript'], ['inputobject'])],
  ['write-output', plain(['noenumerate'], ['inputobject'], 1, true)],
  ['write-host', plain(['nonewline'], ['object', 'separator', 'foregroundcolor', 'backgroundcolor'], 1, true)],
  ['write-verbose', WRITE_STREAM],
  ['write-warning', WRITE_STREAM],
  ['write-debug', WRITE_STREAM],
  ['write-information', plain([], ['messagedata', 'tags'], 2)],
  ['join-path', plain(['resolve'], ['path', 'childpath', 'additionalchildpath', 'extension'], 2, true)],
  [
    'split-path',
    plain(['parent', 'leaf', 'leafbase', 'extension', 'qualifier', 'noqualifier', 'isabsolute', 'resolve'], ['path', 'literalpath'], 1),
  ],
  ['foreach-object', plain([], ['begin', 'process', 'end', 'remainingscripts'], 1, true)],
];

/** Read cmdlets among `PATH_CMDLETS`. */
const PATH_READS = [
  'get-childitem',
  'get-content',
  'get-item',
  'get-itemproperty',
  'get-itempropertyvalue',
  'get-filehash',
  'get-acl',
  'get-winevent',
  'test-path',
  'test-json',
  'resolve-path',
  'convert-path',
  'select-string',
  'select-xml',
  'format-hex',
];

/**
 * The cmdlets that only read or compute, with the parameters known to keep
 * them so (DESIGN.md §5.5): a read is a cmdlet of this list with only these
 * parameters; any other cmdlet, whatever its verb, or another parameter, is
 * a write. The common parameters that assign variables (`VARIABLE_PARAMETERS`)
 * are not reads either.
 */
export const READ_CMDLETS: ReadonlyMap<string, PathSpec> = new Map([
  ...PLAIN_READS,
  ...PATH_READS.map((name): [string, PathSpec] => [name, PATH_CMDLETS.get(name)!]),
]);

/**
 * How a cmdlet's arguments name processes or services (issue #24's named
 * kinds, `process:<name-or-id>`, `service:<name>`): the kind, the parameters
 * whose values are names or ids, the parameters that name them in a way not
 * comparable (`-DisplayName` of a start/stop, `-InputObject`), the ones
 * that move the call to another computer, and `spec`, its parameters for
 * `parseArgs`. The first positional operand is a name (or an id).
 */
export interface PlaceSpec {
  kind: 'process' | 'service';
  names: ReadonlySet<string>;
  opaque: ReadonlySet<string>;
  remote: ReadonlySet<string>;
  spec: PathSpec;
}

const PROCESS_NAMES = ['name', 'processname', 'id', 'pid'];
const SERVICE_NAMES = ['name', 'servicename', 'sn'];
const REMOTE = ['computername', 'cn'];

/** A `PlaceSpec`: the kind, the name parameters, the opaque ones, and the other parameters (switches, values). */
function place(kind: PlaceSpec['kind'], names: string[], opaque: string[], other: { switches: string[]; values: string[] }): PlaceSpec {
  return {
    kind,
    names: new Set(names),
    opaque: new Set(opaque),
    remote: new Set(REMOTE),
    spec: { ...spec(other.switches, [...names, ...opaque, ...REMOTE, ...other.values], ['other'], []), more: true },
  };
}

const PROCESS_WRITE = place('process', PROCESS_NAMES, ['inputobject'], { switches: ['passthru', 'force'], values: [] });
const SERVICE_WRITE = place('service', SERVICE_NAMES, ['displayname', 'inputobject'], {
  switches: ['passthru', 'force', 'nowait'],
  values: ['include', 'exclude'],
});
const SERVICE_SETTINGS = place('service', SERVICE_NAMES, ['inputobject'], {
  switches: ['passthru', 'force'],
  values: [
    'displayname',
    'description',
    'startuptype',
    'status',
    'credential',
    'securitydescriptorsddl',
    'binarypathname',
    'path',
    'dependson',
  ],
});

/**
 * The cmdlets whose targets are processes or services, by name: the reads
 * `Get-Process` (`ps`, `gps`) and `Get-Service`, which establish what they
 * list (`process:*` / `service:*` when they name nothing), and the writes
 * that stop, start or change them.
 */
export const PLACE_CMDLETS: ReadonlyMap<string, PlaceSpec> = new Map([
  ['get-process', place('process', PROCESS_NAMES, ['inputobject'], { switches: [], values: [] })],
  ['get-service', place('service', SERVICE_NAMES, ['displayname', 'inputobject', 'include', 'exclude'], { switches: [], values: [] })],
  ['stop-process', PROCESS_WRITE],
  ['debug-process', PROCESS_WRITE],
  ['start-service', SERVICE_WRITE],
  ['stop-service', SERVICE_WRITE],
  ['restart-service', SERVICE_WRITE],
  ['suspend-service', SERVICE_WRITE],
  ['resume-service', SERVICE_WRITE],
  ['remove-service', SERVICE_WRITE],
  ['set-service', SERVICE_SETTINGS],
  ['new-service', SERVICE_SETTINGS],
]);

/** Cmdlets that pass on a subset of their input, in any order: what a pipeline's producer named, they name too. */
export const FILTER_CMDLETS: ReadonlySet<string> = new Set(['where-object', 'sort-object']);
