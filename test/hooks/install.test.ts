import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'jsonc-parser';
import { afterAll, describe, expect, test } from 'vitest';
import {
  defaultHookCommand,
  hookEventsOf,
  hookSettingsFile,
  HookSettingsError,
  installedHooks,
  installHookSettings,
  isOurHookCommand,
  readSettingsFile,
  uninstallHookSettings,
  writeSettingsFile,
} from '../../src/hooks/install.js';
import { HOOK_HOSTS, type HookHost } from '../../src/hooks/types.js';

const dir = mkdtempSync(join(tmpdir(), 'pulse-safety-install-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const command = (host: HookHost) => `npx --no-install pulse-safety hook ${host}`;

/** A settings file of the user's own for each host: their own hooks, other settings, comments where the host reads JSONC. */
const userFiles: Record<HookHost, string> = {
  'claude-code': `{
  // the team's settings
  "permissions": { "allow": ["Bash(npm test)"] },
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./scripts/lint-bash.sh" }] }, // ours, keep
    ],
    "Notification": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  }
}
`,
  'gemini-cli': `{
  /* model choice */
  "model": { "name": "gemini-2.5-pro" },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [{ "name": "fmt", "type": "command", "command": "./fmt.sh", "timeout": 5000 }]
      }
    ]
  }
}
`,
  codex: `{
\t"hooks": {
\t\t"Stop": [
\t\t\t{
\t\t\t\t"hooks": [{ "type": "command", "command": "python3 ~/.codex/stop.py" }]
\t\t\t}
\t\t]
\t}
}
`,
  cursor: `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": ".cursor/hooks/format.sh" }],
    "preToolUse": [{ "command": ".cursor/hooks/audit.sh", "matcher": "Shell" }]
  }
}
`,
  copilot: `{
  "version": 1,
  "hooks": {
    "sessionStart": [{ "type": "command", "bash": "echo started >> log.txt" }]
  }
}
`,
};

describe.each(HOOK_HOSTS)('%s settings', (host) => {
  test('a fresh install writes one entry of ours per event, with the host fields', () => {
    const result = installHookSettings(host, null, command(host), 'f.json');
    expect(result.changed).toBe(true);
    expect(result.events).toEqual(hookEventsOf(host));
    const hooks = installedHooks(host, result.text, 'f.json');
    expect(hooks.map((h) => h.event)).toEqual(hookEventsOf(host));
    expect(new Set(hooks.map((h) => h.command))).toEqual(new Set([command(host)]));
    const root = parse(result.text!) as Record<string, unknown>;
    if (host === 'cursor' || host === 'copilot') expect(root.version).toBe(1);
    for (const h of hooks) {
      switch (host) {
        case 'claude-code':
          expect(h.entry).toMatchObject({ type: 'command', timeout: 120 });
          expect(h.entry.onFailure).toBe(h.event === 'PreToolUse' ? 'block' : undefined);
          break;
        case 'gemini-cli':
          expect(h.entry).toMatchObject({ type: 'command', name: 'pulse-safety', timeout: 120_000 });
          break;
        case 'codex':
          expect(h.entry).toEqual({ type: 'command', command: command(host), timeout: 120 });
          break;
        case 'cursor':
          expect(h.entry).toEqual({ type: 'command', command: command(host), timeout: 120, failClosed: true });
          break;
        case 'copilot':
          expect(h.entry).toEqual({ type: 'command', bash: command(host), timeoutSec: 120 });
          break;
      }
    }
  });

  test('installing twice adds nothing; uninstall gives back the file byte for byte, the user hooks and comments kept', () => {
    const original = userFiles[host];
    const once = installHookSettings(host, original, command(host), 'f.json');
    expect(once.changed).toBe(true);
    // The user's comments and hooks are still there.
    for (const comment of original.match(/\/\/.*|\/\*.*?\*\//g) ?? []) expect(once.text).toContain(comment);
    const userCommands = (original.match(/"(?:command|bash)": "[^"]*"/g) ?? []).map((c) => c.replace(/^"(?:command|bash)": /, ''));
    expect(userCommands.length).toBeGreaterThan(0);
    for (const c of userCommands) expect(once.text).toContain(c);
    const twice = installHookSettings(host, once.text, command(host), 'f.json');
    expect(twice).toEqual({ text: once.text, changed: false, events: [] });
    const removed = uninstallHookSettings(host, once.text, 'f.json');
    expect(removed.changed).toBe(true);
    expect(removed.text).toBe(original);
    expect(uninstallHookSettings(host, original, 'f.json')).toEqual({ text: original, changed: false, events: [] });
  });

  test('a new command replaces the old one in place; no second entry of ours', () => {
    const old = `/old/node /old/pulse-safety-fsm/dist/src/bin.js hook ${host}`;
    const first = installHookSettings(host, userFiles[host], old, 'f.json');
    const second = installHookSettings(host, first.text, command(host), 'f.json');
    expect(second.changed).toBe(true);
    const commands = installedHooks(host, second.text, 'f.json').map((h) => h.command);
    expect(commands).toHaveLength(hookEventsOf(host).length);
    expect(new Set(commands)).toEqual(new Set([command(host)]));
    expect(second.text).not.toContain('/old/node');
    expect(uninstallHookSettings(host, second.text, 'f.json').text).toBe(userFiles[host]);
  });

  test('uninstalling from a file that held only our hooks removes the file', () => {
    const only = installHookSettings(host, null, command(host), 'f.json');
    expect(uninstallHookSettings(host, only.text, 'f.json')).toEqual({ text: null, changed: true, events: hookEventsOf(host) });
  });

  test('a custom --command is ours for uninstall only when named', () => {
    const custom = `/opt/gate/run-${host}.sh`;
    const installed = installHookSettings(host, userFiles[host], custom, 'f.json');
    expect(uninstallHookSettings(host, installed.text, 'f.json').changed).toBe(false);
    expect(uninstallHookSettings(host, installed.text, 'f.json', custom).text).toBe(userFiles[host]);
  });

  test('a file that is not JSON, or whose hooks are not an object, is refused and not guessed at', () => {
    expect(() => installHookSettings(host, '{ "hooks": [ }', command(host), 'bad.json')).toThrow(HookSettingsError);
    expect(() => installHookSettings(host, '{ "hooks": [] }', command(host), 'bad.json')).toThrow(/'hooks' is not an object/);
    expect(() => installHookSettings(host, '[1]', command(host), 'bad.json')).toThrow(/not a JSON object/);
    expect(() => uninstallHookSettings(host, '{ "hooks": { ', 'bad.json')).toThrow(/bad\.json: not valid JSON/);
  });
});

describe('where the settings are', () => {
  const env = { HOME: '/home/u' };
  test.each([
    ['claude-code', '/p/.claude/settings.json', '/home/u/.claude/settings.json'],
    ['gemini-cli', '/p/.gemini/settings.json', '/home/u/.gemini/settings.json'],
    ['codex', '/p/.codex/hooks.json', '/home/u/.codex/hooks.json'],
    ['cursor', '/p/.cursor/hooks.json', '/home/u/.cursor/hooks.json'],
    ['copilot', '/p/.github/hooks/pulse-safety.json', '/home/u/.copilot/hooks/pulse-safety.json'],
  ] as const)('%s: project %s, user %s', (host, project, user) => {
    expect(hookSettingsFile(host, 'project', { projectDir: '/p', env })).toBe(project);
    expect(hookSettingsFile(host, 'user', { projectDir: '/p', env })).toBe(user);
  });

  test("the hosts' own home variables move the user's file", () => {
    expect(hookSettingsFile('claude-code', 'user', { projectDir: '/p', env: { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' } })).toBe(
      '/c/settings.json',
    );
    expect(hookSettingsFile('codex', 'user', { projectDir: '/p', env: { HOME: '/h', CODEX_HOME: '/x' } })).toBe('/x/hooks.json');
    expect(hookSettingsFile('copilot', 'user', { projectDir: '/p', env: { HOME: '/h', COPILOT_HOME: '/g' } })).toBe(
      '/g/hooks/pulse-safety.json',
    );
  });
});

describe('the command written by default', () => {
  const withPackage = join(dir, 'with-package');
  mkdirSync(join(withPackage, 'node_modules', 'pulse-safety-fsm'), { recursive: true });
  writeFileSync(join(withPackage, 'node_modules', 'pulse-safety-fsm', 'package.json'), '{"name":"pulse-safety-fsm"}');
  const without = join(dir, 'without');
  mkdirSync(without, { recursive: true });
  const context = { execPath: '/usr/local/bin/node', binPath: '/opt/my tools/pulse-safety-fsm/dist/src/bin.js' };

  test.each([
    ['claude-code', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/pulse-safety hook claude-code', 'project-bin'],
    ['gemini-cli', '$GEMINI_PROJECT_DIR/node_modules/.bin/pulse-safety hook gemini-cli', 'project-bin'],
    ['cursor', './node_modules/.bin/pulse-safety hook cursor', 'project-bin'],
    ['codex', 'npx --no-install pulse-safety hook codex', 'npx'],
    ['copilot', 'npx --no-install pulse-safety hook copilot', 'npx'],
  ] as const)("%s in a project that has the package: the project's own copy", (host, expected, how) => {
    expect(defaultHookCommand(host, 'project', { projectDir: withPackage, ...context })).toMatchObject({ command: expected, how });
  });

  test('a project without the package, or the user scope: this node and this bin.js, absolute and quoted', () => {
    const absolute = `/usr/local/bin/node '/opt/my tools/pulse-safety-fsm/dist/src/bin.js' hook claude-code`;
    expect(defaultHookCommand('claude-code', 'project', { projectDir: without, ...context })).toMatchObject({
      command: absolute,
      how: 'absolute',
    });
    expect(defaultHookCommand('claude-code', 'user', { projectDir: withPackage, ...context })).toMatchObject({
      command: absolute,
      how: 'absolute',
    });
  });

  test('every default command is recognised as ours', () => {
    for (const host of HOOK_HOSTS) {
      for (const projectDir of [withPackage, without]) {
        expect(isOurHookCommand(defaultHookCommand(host, 'project', { projectDir, ...context }).command, host)).toBe(true);
      }
      expect(isOurHookCommand(`./my-gate hook ${host}`, host)).toBe(false);
      expect(isOurHookCommand(`npx --no-install pulse-safety hook ${host} --debug`, host)).toBe(false);
    }
    expect(isOurHookCommand('npx --no-install pulse-safety hook codex', 'claude-code')).toBe(false);
  });
});

describe('the file I/O', () => {
  test('writes atomically into a new directory, reads back, and null removes the file', async () => {
    const file = join(dir, 'io', '.claude', 'settings.json');
    expect(readSettingsFile(file)).toBeNull();
    await writeSettingsFile(file, '{"a":1}\n');
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    expect(readSettingsFile(file)).toBe('{"a":1}\n');
    await writeSettingsFile(file, null);
    expect(readSettingsFile(file)).toBeNull();
  });
});
