/**
 * Implicit targets (issue #24, DESIGN.md §5.1, §5.3): the place a command
 * changes (a write) or looks at (a read) that its path operands do not name,
 * from its rule's `place` in the command table. A read names the same
 * strings a write of that place does, so it establishes them:
 *
 * - `cwd`: the working directory (`.` when none is known), a target only
 *   when the command writes (package managers, make, test runners,
 *   interpreters running project code): a read of the project would
 *   otherwise establish all of it.
 * - `git`: `git:<dir>`, the repository of the directory git works in (`-C`
 *   moves it; `--work-tree d`, `--git-dir d/.git` name it), on reads
 *   (status, log, diff …) and writes alike. The directory, not the
 *   repository's root, is named: a read in `repo/src` does not establish
 *   `git:repo`.
 * - `path`: paths named by operands with a prefix (`dd of=FILE`) or by
 *   options (`wget -O FILE`, `-P DIR`), or the directory holding the named
 *   path (`split IN PREFIX`).
 * - `remote`: a copy's destination (`scp`, `rsync`, `aws s3 cp`): a remote
 *   `[user@]host:path` is `host:<user@host>:<path>` (a relative or empty
 *   remote path is under the remote home, `~/…`), a URL as written
 *   (`s3://b/k`), a local path resolved as paths are.
 * - `process:<name|pid>`, `service:<unit>` (a `.service` suffix dropped,
 *   on reads and writes alike), `container:<name>`,
 *   `k8s:<resource>/<name>` (resource aliases and plurals normalised:
 *   `po`, `pods` → `pod`); with `-n NS`, `k8s:NS:<resource>/<name>`, with
 *   `-A`, `k8s:*`; `systemctl --user`: `service:user/<unit>`; nothing
 *   named: `<kind>:*` (`ps`, `docker ps`, `systemctl list-units`), or
 *   `k8s:<resource>/*` (`kubectl get pods`).
 * - `cwd` also names the directory of its options' values (`make -f F`);
 *   `paths` fixed paths (`git config --global`); `whenOptions` names the
 *   place only with one of them (`tar -x`); `writeOnly` only on writes;
 *   `unnamed: 'repository'` the directory `git clone URL` makes. A `git`
 *   place with `names` names a repository by a local path (`git push
 *   /srv/other`: `git:/srv/other`).
 *
 * - `unknown`: the command runs code that may change anything (`npm exec`,
 *   `deno eval`, `git filter-branch`): `?/<command>`, only when it writes.
 *   A `remote` place's `sourceOptions` make the sources places too (`rsync
 *   --remove-source-files`).
 *
 * A name only known when it runs is an unknown place (`unknownPlace`),
 * never established. Pure functions of the parsed words; nothing throws.
 */
import { posix } from 'node:path';
import { isUnknownPlace, unknownPlace } from '../../../machines/safety.targets.js';
import { pathTarget } from '../classification.js';
import { joinDir, resolveTargets, type Cwds } from './cwd.js';
import type { Effects } from './effects.js';
import { optionIn, type ParsedArgs, type ParsedOption } from './parse-args.js';
import type { CompiledPlace, CompiledRule } from './table-compile.js';
import { show, type Word } from './words.js';

/** A URL with a scheme (`s3://bucket/key`). */
const URL_WITH_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A remote operand `[user@]host:path` as scp and rsync read it (a `/`, `.` or `~` first makes it local). */
const REMOTE_OPERAND = /^([^/.~:][^/:]*):(.*)$/s;

/** taskkill's switches as Windows and Git Bash pass them (`/IM`, `//IM`, `-IM`), case-insensitive. */
const TASKKILL_SWITCH = /^(?:\/\/?|-)(IM|PID|FI|F|T|S|U|P)$/i;

/** kubectl resource aliases and irregular plurals to the resource's singular name (a regular plural loses its `s`). */
const K8S_RESOURCES: Readonly<Record<string, string>> = {
  po: 'pod',
  pods: 'pod',
  deploy: 'deployment',
  deployments: 'deployment',
  svc: 'service',
  services: 'service',
  ns: 'namespace',
  namespaces: 'namespace',
  rs: 'replicaset',
  replicasets: 'replicaset',
  sts: 'statefulset',
  statefulsets: 'statefulset',
  ds: 'daemonset',
  daemonsets: 'daemonset',
  cm: 'configmap',
  configmaps: 'configmap',
  secrets: 'secret',
  pvc: 'persistentvolumeclaim',
  persistentvolumeclaims: 'persistentvolumeclaim',
  pv: 'persistentvolume',
  persistentvolumes: 'persistentvolume',
  ing: 'ingress',
  ingresses: 'ingress',
  sa: 'serviceaccount',
  serviceaccounts: 'serviceaccount',
  cj: 'cronjob',
  cronjobs: 'cronjob',
  jobs: 'job',
  no: 'node',
  nodes: 'node',
  ep: 'endpoints',
  hpa: 'horizontalpodautoscaler',
  horizontalpodautoscalers: 'horizontalpodautoscaler',
  netpol: 'networkpolicy',
  networkpolicies: 'networkpolicy',
  rc: 'replicationcontroller',
  replicationcontrollers: 'replicationcontroller',
  crd: 'customresourcedefinition',
  crds: 'customresourcedefinition',
  customresourcedefinitions: 'customresourcedefinition',
};

/** A kubectl resource type, normalised: lower case, its API group dropped (`deployments.apps`), aliases and plurals singular. */
export function k8sResource(type: string): string {
  const name = type.toLowerCase().split('.')[0]!;
  const known = K8S_RESOURCES[name];
  if (known !== undefined) return known;
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`; // networkpolicies
  if (name.endsWith('sses')) return name.slice(0, -2); // ingressclasses
  return name.endsWith('s') && !name.endsWith('ss') && name !== 'endpoints' ? name.slice(0, -1) : name; // events, leases
}

/** The working directories as path targets (`.` when none is known); an unknown place for one that cannot be known. */
function cwdTargets(here: Cwds): string[] {
  return here.flatMap((cwd) => (cwd === null ? [unknownPlace('a working directory only known when it runs')] : resolveTargets('.', [cwd])));
}

/** The operands that name places, by `names` and `prefixes` (prefix cut off); words only known when it runs kept as they are. */
function namedOperands(place: CompiledPlace, rule: CompiledRule, args: ParsedArgs): Word[] {
  let operands = args.operands.slice(rule.skip);
  if (place.kind === 'process' && operands.some((w) => w.text !== null && TASKKILL_SWITCH.test(w.text))) {
    return taskkillNames(operands);
  }
  if (place.prefixes.length > 0) {
    operands = operands.flatMap((w) => {
      if (w.text === null || w.pattern) return [w];
      const prefix = place.prefixes.find((p) => w.text!.startsWith(p));
      return prefix === undefined ? [] : [{ ...w, text: w.text.slice(prefix.length) }];
    });
  }
  switch (place.names) {
    case 'none':
      return [];
    case 'first':
      return operands.slice(0, 1);
    case 'last':
      return operands.slice(-1);
    case 'rest':
      return operands.slice(1);
    default:
      return operands;
  }
}

/** taskkill's operands: the word after `/IM` or `/PID`; a filter (`/FI`) names what is only known when it runs. */
function taskkillNames(operands: Word[]): Word[] {
  const names: Word[] = [];
  for (let i = 0; i < operands.length; i++) {
    const match = operands[i]!.text === null ? null : TASKKILL_SWITCH.exec(operands[i]!.text!);
    const which = match?.[1]?.toUpperCase();
    if (which === 'IM' || which === 'PID' || which === 'FI') {
      const value = operands[++i];
      if (value !== undefined) names.push(which === 'FI' ? { ...value, text: null } : value);
    } else if (which === 'S' || which === 'U' || which === 'P') {
      i++; // a remote system, a user, a password: not a process
    } else if (match === null) {
      names.push({ ...operands[i]!, text: null }); // not a switch: what taskkill makes of it is not known
    }
  }
  return names;
}

/** A named place's targets of kind `place.kind` (not `cwd` or `git`). */
function namedTargets(place: CompiledPlace, text: string, here: Cwds): string[] {
  switch (place.kind) {
    case 'path':
      return resolveTargets(place.parent ? posix.dirname(text) : text, here);
    case 'remote':
      return remoteTargets(text, here);
    case 'service':
      return [`service:${text.endsWith('.service') && text.length > 8 ? text.slice(0, -8) : text}`];
    case 'k8s':
      return [`k8s:${text}`];
    default:
      return [`${place.kind}:${text}`];
  }
}

/** A copy's destination: a URL as written, `host:<user@host>:<path>` for a remote one, else a local path. */
function remoteTargets(text: string, here: Cwds): string[] {
  if (URL_WITH_SCHEME.test(text)) {
    const target = pathTarget(text);
    return target === null ? [] : [target];
  }
  const remote = REMOTE_OPERAND.exec(text);
  if (remote === null) return resolveTargets(text, here);
  const path = remote[2]!;
  const where = path === '' || path === '~' ? '~' : path.startsWith('/') || path.startsWith('~/') ? path : `~/${path}`;
  return [`host:${remote[1]}:${where}`];
}

/** kubectl's operands as `k8s:` targets: `TYPE [NAME…]` or `TYPE/NAME…` (TYPE may be a comma list). */
function k8sTargets(words: Word[]): string[] {
  const [first, ...rest] = words;
  if (first === undefined) return [];
  if (first.text === null || first.pattern) return [unknownPlace(`k8s:${show(first)}`)];
  const out: string[] = [];
  if (first.text.includes('/')) {
    for (const word of words) {
      const slash = word.text?.indexOf('/') ?? -1;
      if (word.text === null || word.pattern || slash <= 0) out.push(unknownPlace(`k8s:${show(word)}`));
      else out.push(`k8s:${k8sResource(word.text.slice(0, slash))}/${word.text.slice(slash + 1)}`);
    }
    return out;
  }
  for (const type of first.text.split(',').filter((t) => t !== '')) {
    const resource = k8sResource(type);
    if (rest.length === 0) out.push(`k8s:${resource}/*`);
    for (const word of rest) {
      out.push(word.text === null || word.pattern ? unknownPlace(`k8s:${resource}/${show(word)}`) : `k8s:${resource}/${word.text}`);
    }
  }
  return out;
}

/** `git:<dir>` for each directory git may work in: `--work-tree d`, `--git-dir d/.git` (its parent) or the working directory. */
function gitTargets(place: CompiledPlace, effects: Effects, args: ParsedArgs): string[] {
  const given = args.options.filter((option) => optionIn(option, place.options));
  const chosen = given.filter((option) => option.name === '--work-tree').pop() ?? given.pop();
  let dirs: Cwds = effects.here;
  if (chosen !== undefined) {
    const value = chosen.value;
    if (value?.text == null || value.pattern) return [unknownPlace(`git:${show(value)}`)];
    const text =
      chosen.name === '--git-dir' ? value.text.replace(/\/*\.git\/*$/, '') || (value.text.startsWith('/') ? '/' : '.') : value.text;
    dirs = effects.here.map((cwd) => joinDir(cwd, text)?.replace(/(.)\/+$/, '$1') ?? null);
  }
  return dirs.map((dir) => (dir === null ? unknownPlace('git: a directory only known when it runs') : `git:${dir === '' ? '.' : dir}`));
}

/** Whether systemctl's options choose the user's service manager (`--user`, `--global`), the last of them and `--system` deciding. */
function userServices(options: readonly ParsedOption[]): boolean {
  let user = false;
  for (const option of options) {
    if (option.name === '--user' || option.name === '--global') user = true;
    else if (option.name === '--system') user = false;
  }
  return user;
}

/** kubectl's namespace options: `-n NS` qualifies a resource's name, `-A` names every namespace. */
const K8S_NAMESPACE = new Set(['-n', '--namespace']);
const K8S_ALL_NAMESPACES = new Set(['-A', '--all-namespaces']);

/**
 * The namespace kubectl's options name, the last one given: `'*'` for every
 * namespace (`-A`), a name, null when only known when it runs, undefined
 * when none is given (the context's own, left out of the target).
 */
function k8sNamespace(options: readonly ParsedOption[]): string | null | undefined {
  let namespace: string | null | undefined;
  for (const option of options) {
    if (optionIn(option, K8S_ALL_NAMESPACES)) namespace = '*';
    else if (optionIn(option, K8S_NAMESPACE)) {
      const value = option.value;
      namespace = value?.text == null || value.pattern || value.text.includes(':') ? null : value.text;
    }
  }
  return namespace;
}

/** kubectl's targets in a namespace: `k8s:<ns>:<resource>/<name>`; every namespace (`-A`): `k8s:*`. */
function inNamespace(targets: string[], namespace: string | null | undefined): string[] {
  if (namespace === undefined) return targets;
  if (namespace === '*') return ['k8s:*'];
  return targets.map((target) =>
    isUnknownPlace(target)
      ? target
      : namespace === null
        ? unknownPlace(`k8s: a namespace only known when it runs, ${target}`)
        : `k8s:${namespace}:${target.slice(4)}`,
  );
}

/** A repository operand that is a local path (`/srv/r`, `../r`, `~/r`, `file:///srv/r`) as `git:<dir>`; none for a remote's name or URL. */
function gitRepositoryTargets(word: Word, here: Cwds): string[] {
  if (word.text === null || word.pattern) return [unknownPlace(`git:${show(word)}`)];
  const text = word.text.startsWith('file://') ? word.text.slice('file://'.length) : word.text;
  if (!/^(\/|~|\.)/.test(text)) return [];
  return here.map((cwd) => {
    const dir = joinDir(cwd, text)?.replace(/(.)\/+$/, '$1');
    return dir == null ? unknownPlace(`git:${text}`) : `git:${dir}`;
  });
}

/** The directory `git clone URL` makes without one named: the URL's last segment, `.git` dropped (kept by `--bare`, `--mirror`). */
function repositoryTargets(args: ParsedArgs, here: Cwds): string[] {
  const url = args.operands[0];
  const name =
    url?.text == null || url.pattern
      ? ''
      : url.text
          .replace(/(\/\.git)?\/*$/, '')
          .replace(/\.git$/, '')
          .split(/[/:]/)
          .pop()!;
  if (name === '' || name === '.' || name === '..')
    return [unknownPlace(`a directory named after ${url === undefined ? 'nothing' : show(url)}`)];
  const bare = args.options.some((option) => option.name === '--bare' || option.name === '--mirror');
  return resolveTargets(bare ? `${name}.git` : name, here);
}

/** Whether a `whenOptions` place is named: one of its options given, or tar's old style first word of letters (`xf`). */
function placeWanted(when: Set<string>, args: ParsedArgs, firstWord: Word | undefined): boolean {
  if (args.options.some((option) => optionIn(option, when))) return true;
  const first = args.operands[0];
  if (first === undefined || first !== firstWord || first.text === null || !/^[A-Za-z]+$/.test(first.text)) return false;
  return [...when].some((option) => /^-[A-Za-z]$/.test(option) && first.text!.includes(option[1]!));
}

/**
 * Adds the rule's place to the command's targets (issue #24): for `cwd`
 * or a `writeOnly` place, to `effects.writeTargets` (targets only when it
 * writes), for every other kind to `effects.targets`. Does nothing for a
 * rule without `place`, or a `whenOptions` place none of whose options is
 * given. `around.inherited` are the options of the commands it is a
 * subcommand of (`kubectl -n prod delete pod x`), `around.firstWord` its
 * first argument.
 */
export function notePlace(
  rule: CompiledRule,
  effects: Effects,
  args: ParsedArgs,
  around: { inherited?: readonly ParsedOption[]; firstWord?: Word } = {},
): void {
  const place = rule.place;
  if (place === null) return;
  const { inherited = [], firstWord } = around;
  if (place.when !== null && !placeWanted(place.when, args, firstWord)) return;
  const out = place.writeOnly || place.kind === 'cwd' || place.kind === 'unknown' ? effects.writeTargets : effects.targets;
  if (place.kind === 'unknown') {
    // It runs code that may change anything (`npm exec`, `deno eval`, `git filter-branch`): named by the command.
    out.push(unknownPlace(effects.label));
    return;
  }
  const words = [...namedOperands(place, rule, args)];
  if (place.kind === 'remote' && args.options.some((option) => optionIn(option, place.sources))) {
    // rsync --remove-source-files: the sources are changed too.
    const skipped = args.operands.slice(rule.skip);
    words.push(...skipped.filter((word) => !words.includes(word)));
  }
  for (const option of args.options) {
    if (!optionIn(option, place.options)) continue;
    const value = option.value ?? { text: null, optionLike: false, pattern: false };
    // A list of pids or names (`ps -p 1,2`, `ps -p '1 2'`): one place each.
    const list =
      place.kind === 'process' && value.text !== null && !value.pattern ? value.text.split(/[\s,]+/).filter((n) => n !== '') : null;
    words.push(...(list === null ? [value] : list.map((text) => ({ ...value, text }))));
  }
  if (place.kind === 'cwd') {
    out.push(...cwdTargets(effects.here));
    const script = args.operands[rule.skip];
    // `curl … | python3`, `python3 -`, `node < x.js`: code it reads from its input, which names no place.
    const inline = args.options.some((option) => optionIn(option, rule.unknownPlace)); // `python3 -c CODE`: not its input
    if (place.stdinCode && !inline && (script === undefined || script.text === '-')) out.push(unknownPlace(`${effects.label} <stdin>`));
    for (const word of words) {
      if (word.text === null || word.pattern) out.push(unknownPlace(show(word)));
      else out.push(...resolveTargets(posix.dirname(word.text), effects.here)); // make -f /elsewhere/Makefile: its directory too
    }
    return;
  }
  if (place.kind === 'git') {
    // names 'none': the options move the working directory (`--git-dir`); else operands and options name a repository (push).
    if (place.names === 'none') out.push(...gitTargets(place, effects, args));
    else out.push(...words.flatMap((word) => gitRepositoryTargets(word, effects.here)));
    return;
  }
  const targets: string[] = [];
  for (const option of args.options) {
    for (const path of place.paths.get(option.name) ?? []) targets.push(...resolveTargets(path, effects.here));
  }
  if (place.kind === 'service' && userServices([...inherited, ...args.options])) {
    // systemctl --user: the user's own manager, units apart from the system's (`service:user/<unit>`).
    for (const word of words) {
      if (word.text === null || word.pattern) targets.push(unknownPlace(`service:user/${show(word)}`));
      else targets.push(...namedTargets(place, word.text, effects.here).map((t) => `service:user/${t.slice('service:'.length)}`));
    }
    if (words.length === 0 && place.unnamed === 'all') targets.push('service:user/*');
    out.push(...targets);
    return;
  }
  if (place.kind === 'k8s') targets.push(...inNamespace(k8sTargets(words), k8sNamespace([...inherited, ...args.options])));
  else {
    for (const word of words) {
      if (word.text === null || word.pattern)
        targets.push(unknownPlace(`${place.kind === 'path' || place.kind === 'remote' ? '' : `${place.kind}:`}${show(word)}`));
      else targets.push(...namedTargets(place, word.text, effects.here));
    }
  }
  if (words.length === 0 && place.unnamed === 'all') {
    targets.push(...(place.kind === 'k8s' ? inNamespace(['k8s:*'], k8sNamespace([...inherited, ...args.options])) : [`${place.kind}:*`]));
  }
  if (targets.length === 0 && place.unnamed === 'cwd') targets.push(...cwdTargets(effects.here));
  if (targets.length === 0 && place.unnamed === 'repository') targets.push(...repositoryTargets(args, effects.here));
  out.push(...targets);
}
