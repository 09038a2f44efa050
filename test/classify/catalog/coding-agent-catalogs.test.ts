/**
 * The catalogs of opencode, Qwen Code and Kiro CLI: representative calls
 * with the arguments each agent's tools take (opencode 1.18.33's tool
 * parameters; Qwen Code's ToolNames and ReadFileToolParams; Kiro CLI's
 * built-in tools reference and Amazon Q Developer CLI's tool arguments: see
 * each catalog's `source`), classified for kind, targets and the destructive
 * flag. The expected kinds are written from those tools' documentation, not
 * read from the catalog files.
 *
 * Spec: DESIGN.md §2 (catalogs, fail closed), §3.6 (`neutral`), §5.1–5.2
 * (targets from the catalog), §5.5 (commands parsed).
 */
import { describe, expect, test } from 'vitest';
import { builtinCatalogs, createCallClassifier } from '../../../src/classify/catalog/index.js';
import type { ToolKind } from '../../../machines/safety.types.js';

type Name = 'opencode' | 'qwen-code' | 'kiro';
interface Row {
  tool: string;
  args: unknown;
  kind: ToolKind;
  targets?: string[];
  destructive?: boolean;
}

function rows(name: Name, list: Row[]): void {
  const classify = createCallClassifier(builtinCatalogs[name]);
  test.for(list)(`${name}: $tool $args`, (row) => {
    const result = classify(row.tool, row.args, { cwd: '/repo' });
    expect(result.kind).toBe(row.kind);
    if (row.targets !== undefined) expect(result.targets).toEqual(row.targets);
    if (row.destructive !== undefined) expect(result.destructive).toBe(row.destructive);
  });
}

describe('the catalogs ship under their names, with a source', () => {
  test.for(['opencode', 'qwen-code', 'kiro'] as const)('%s', (name) => {
    expect(builtinCatalogs[name].name).toBe(name);
    expect((builtinCatalogs[name] as { source?: string }).source?.length ?? 0).toBeGreaterThan(20);
  });
});

describe('opencode', () => {
  rows('opencode', [
    { tool: 'read', args: { filePath: '/repo/a.txt' }, kind: 'read', targets: ['/repo/a.txt'] },
    { tool: 'read', args: { filePath: 'src/a.ts' }, kind: 'read', targets: ['/repo/src/a.ts'] },
    { tool: 'write', args: { filePath: '/repo/a.txt', content: 'x' }, kind: 'write', targets: ['/repo/a.txt'] },
    { tool: 'edit', args: { filePath: '/repo/a.txt', oldString: 'a', newString: 'b' }, kind: 'write', targets: ['/repo/a.txt'] },
    { tool: 'glob', args: { pattern: '**/*.ts', path: '/repo/src' }, kind: 'resolve', targets: ['/repo/src'] },
    { tool: 'grep', args: { pattern: 'TODO', path: '/repo', include: '*.ts' }, kind: 'read', targets: ['/repo'] },
    { tool: 'bash', args: { command: 'git status', workdir: '/repo', description: 'status' }, kind: 'read' },
    { tool: 'bash', args: { command: 'rm -rf build', workdir: '/repo' }, kind: 'write', targets: ['/repo/build'], destructive: true },
    { tool: 'apply_patch', args: { patchText: '*** Begin Patch\n*** Delete File: a.txt\n*** End Patch' }, kind: 'write', targets: [] },
    { tool: 'task', args: { description: 'x', prompt: 'y', subagent_type: 'general' }, kind: 'write' },
    { tool: 'todowrite', args: { todos: [] }, kind: 'neutral' },
    { tool: 'question', args: { questions: [] }, kind: 'user_input' },
    { tool: 'webfetch', args: { url: 'https://example.com', format: 'markdown' }, kind: 'read' },
    { tool: 'github_create_issue', args: { title: 'x' }, kind: 'write' },
  ]);
});

describe('qwen-code', () => {
  rows('qwen-code', [
    { tool: 'read_file', args: { file_path: '/repo/a.txt' }, kind: 'read', targets: ['/repo/a.txt'] },
    { tool: 'edit', args: { file_path: '/repo/a.txt', old_string: 'a', new_string: 'b' }, kind: 'write', targets: ['/repo/a.txt'] },
    { tool: 'write_file', args: { file_path: '/repo/b.txt', content: 'x' }, kind: 'write', targets: ['/repo/b.txt'] },
    { tool: 'run_shell_command', args: { command: 'ls', directory: '/repo/src' }, kind: 'read' },
    { tool: 'run_shell_command', args: { command: 'rm -rf dist', directory: '/repo' }, kind: 'write', targets: ['/repo/dist'] },
    { tool: 'list_directory', args: { path: '/repo' }, kind: 'resolve', targets: ['/repo'] },
    { tool: 'agent', args: { description: 'x', prompt: 'y' }, kind: 'write' },
    { tool: 'task_create', args: { subject: 'x' }, kind: 'neutral' },
    { tool: 'ask_user_question', args: {}, kind: 'user_input' },
  ]);
});

describe('kiro', () => {
  rows('kiro', [
    { tool: 'fs_read', args: { mode: 'Line', path: '/repo/a.txt' }, kind: 'read', targets: ['/repo/a.txt'] },
    {
      tool: 'fs_write',
      args: { command: 'str_replace', path: '/repo/a.txt', old_str: 'a', new_str: 'b' },
      kind: 'write',
      targets: ['/repo/a.txt'],
    },
    { tool: 'execute_bash', args: { command: 'cat /etc/hosts' }, kind: 'read' },
    { tool: 'execute_bash', args: { command: 'rm -rf /tmp/x' }, kind: 'write', destructive: true },
    {
      tool: 'use_aws',
      args: { service_name: 'ec2', operation_name: 'describe-instances', region: 'us-east-1' },
      kind: 'read',
      targets: ['service_name=ec2'],
    },
    { tool: 'use_aws', args: { service_name: 's3api', operation_name: 'list-buckets' }, kind: 'read' },
    { tool: 'use_aws', args: { service_name: 'ec2', operation_name: 'terminate-instances' }, kind: 'write', targets: ['service_name=ec2'] },
    { tool: 'use_aws', args: { service_name: 'ec2', operation_name: 'getaway' }, kind: 'write' },
    { tool: 'knowledge', args: { command: 'search', query: 'x' }, kind: 'write' },
    { tool: 'todo_list', args: {}, kind: 'neutral' },
  ]);
});
