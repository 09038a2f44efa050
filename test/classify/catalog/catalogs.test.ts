/**
 * The shipped catalogs of real agents' tools (claude-code, gemini-cli, codex,
 * mcp): representative calls with realistic arguments, each classified with
 * `createCallClassifier` and checked for its kind, targets and destructive
 * flag; the catalog files themselves (valid JSON, a source named); and
 * docs/catalogs.md naming every tool it explains.
 *
 * Spec: DESIGN.md §2 (catalogs, fail closed), §3.6 (`neutral`), §4 (MCP
 * annotations), §5.1–5.2 (targets from the catalog), §5.5 (commands parsed),
 * §5.6 (destructive writes). The expected kinds are written out from each
 * agent's public tool documentation (see docs/catalogs.md), not read from the
 * catalog files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { builtinCatalogs, createCallClassifier } from '../../../src/classify/catalog/index.js';
import type { ToolKind } from '../../../machines/safety.types.js';

type AgentCatalog = 'claude-code' | 'gemini-cli' | 'codex' | 'cursor' | 'copilot' | 'mcp';
const AGENT_CATALOGS: AgentCatalog[] = ['claude-code', 'gemini-cli', 'codex', 'cursor', 'copilot', 'mcp'];

/**
 * One expected classification. `targets` is the exact list (sorted, as the
 * classifier returns it); `someTargets` only lists targets that must be among
 * them (for parsed shell commands, whose other targets are the shell
 * classifier's business). `destructive` is checked when given.
 */
interface Row {
  tool: string;
  args: unknown;
  kind: ToolKind;
  targets?: string[];
  someTargets?: string[];
  destructive?: boolean;
  note: string;
}

function runRows(catalog: AgentCatalog, rows: Row[]): void {
  const classify = createCallClassifier(builtinCatalogs[catalog]);
  test.for(rows)('$tool: $note', (row) => {
    const result = classify(row.tool, row.args);
    expect(result.kind).toBe(row.kind);
    if (row.targets !== undefined) expect(result.targets).toEqual(row.targets);
    if (row.someTargets !== undefined) expect(result.targets).toEqual(expect.arrayContaining(row.someTargets));
    if (row.destructive !== undefined) expect(result.destructive).toBe(row.destructive);
  });
}

function catalogFile(name: AgentCatalog): string {
  return readFileSync(new URL(`../../../src/catalogs/${name}.json`, import.meta.url), 'utf8');
}

describe('the catalog files', () => {
  test.for(AGENT_CATALOGS)('%s.json is valid JSON', (name) => {
    expect(() => JSON.parse(catalogFile(name))).not.toThrow();
  });

  test.for(AGENT_CATALOGS)('%s.json names the source of its tool list', (name) => {
    const source = (JSON.parse(catalogFile(name)) as { source?: unknown }).source;
    expect(typeof source === 'string' && source.trim().length > 0).toBe(true);
  });

  test.for(AGENT_CATALOGS)('%s is shipped under its own name', (name) => {
    expect(builtinCatalogs[name].name).toBe(name);
  });

  test.for(AGENT_CATALOGS)('%s validates and compiles', (name) => {
    expect(() => createCallClassifier(builtinCatalogs[name])).not.toThrow();
  });
});

describe('docs/catalogs.md explains every tool of every catalog', () => {
  const docs = readFileSync(new URL('../../../docs/catalogs.md', import.meta.url), 'utf8');
  /** The text of the `## <name>` section, up to the next `## ` heading. */
  const section = (name: string): string => {
    const start = docs.indexOf(`\n## ${name}`);
    if (start < 0) return '';
    const next = docs.indexOf('\n## ', start + 1);
    return docs.slice(start, next < 0 ? undefined : next);
  };
  const rows = AGENT_CATALOGS.flatMap((catalog) => Object.keys(builtinCatalogs[catalog].tools).map((tool) => ({ catalog, tool })));
  test.for(rows)('$catalog: `$tool`', ({ catalog, tool }) => {
    expect(section(catalog)).toContain(`\`${tool}\``);
  });
});

describe('claude-code: file tools name their paths', () => {
  runRows('claude-code', [
    { tool: 'Read', args: { file_path: '/repo/src/index.ts' }, kind: 'read', targets: ['/repo/src/index.ts'], note: 'reads a file' },
    {
      tool: 'Read',
      args: { file_path: '/repo/src/../README.md', offset: 10, limit: 40 },
      kind: 'read',
      targets: ['/repo/README.md'],
      note: 'path normalized',
    },
    {
      tool: 'Read',
      args: '{"file_path":"/repo/package.json"}',
      kind: 'read',
      targets: ['/repo/package.json'],
      note: 'arguments as a JSON string',
    },
    {
      tool: 'Glob',
      args: { pattern: '**/*.test.ts', path: '/repo/test' },
      kind: 'resolve',
      targets: ['/repo/test'],
      note: 'lists files under a directory',
    },
    { tool: 'Glob', args: { pattern: 'src/**/*.ts' }, kind: 'resolve', targets: [], note: 'no path: no target' },
    {
      tool: 'Grep',
      args: { pattern: 'TODO', path: 'src/', glob: '*.ts', output_mode: 'content' },
      kind: 'read',
      targets: ['src'],
      note: 'relative path kept relative',
    },
    { tool: 'LS', args: { path: '/repo/docs/' }, kind: 'resolve', targets: ['/repo/docs'], note: 'former LS tool' },
    {
      tool: 'LSP',
      args: { operation: 'findReferences', filePath: '/repo/src/a.ts', line: 12, character: 7 },
      kind: 'read',
      targets: ['/repo/src/a.ts'],
      note: 'language-server query',
    },
    {
      tool: 'NotebookRead',
      args: { notebook_path: '/repo/analysis.ipynb' },
      kind: 'read',
      targets: ['/repo/analysis.ipynb'],
      note: 'former notebook reader',
    },
    {
      tool: 'Edit',
      args: { file_path: '/repo/src/a.ts', old_string: 'let x', new_string: 'const x' },
      kind: 'write',
      targets: ['/repo/src/a.ts'],
      destructive: false,
      note: 'edits a file',
    },
    {
      tool: 'MultiEdit',
      args: { file_path: '/repo/src/a.ts', edits: [{ old_string: 'a', new_string: 'b' }] },
      kind: 'write',
      targets: ['/repo/src/a.ts'],
      note: 'former multi-edit',
    },
    {
      tool: 'Write',
      args: { file_path: '/repo/notes.md', content: '# Notes\n' },
      kind: 'write',
      targets: ['/repo/notes.md'],
      destructive: false,
      note: 'writes a file, not destructive',
    },
    {
      tool: 'NotebookEdit',
      args: { notebook_path: '/repo/analysis.ipynb', cell_id: 'c3', new_source: '', edit_mode: 'delete' },
      kind: 'write',
      targets: ['/repo/analysis.ipynb'],
      note: 'edits a notebook',
    },
    {
      tool: 'EnterWorktree',
      args: { path: '/repo/.claude/worktrees/fix-login' },
      kind: 'write',
      targets: ['/repo/.claude/worktrees/fix-login'],
      note: 'switches into a worktree',
    },
    {
      tool: 'ExitWorktree',
      args: { action: 'remove', discard_changes: true },
      kind: 'write',
      destructive: true,
      note: 'may delete the worktree and its work',
    },
  ]);
});

describe('claude-code: commands are parsed', () => {
  runRows('claude-code', [
    { tool: 'Bash', args: { command: 'git status', description: 'Show working tree status' }, kind: 'read', note: 'git status reads' },
    {
      tool: 'Bash',
      args: { command: 'ls -la src && cat package.json' },
      kind: 'read',
      someTargets: ['package.json'],
      note: 'a list of reads names its operands',
    },
    { tool: 'Bash', args: { command: 'npm install' }, kind: 'write', note: 'npm install writes' },
    { tool: 'Bash', args: { command: 'echo done > status.txt' }, kind: 'write', note: 'an output redirection writes' },
    {
      tool: 'Bash',
      args: { command: 'rm -rf build' },
      kind: 'write',
      destructive: true,
      someTargets: ['build'],
      note: 'recursive removal is destructive',
    },
    { tool: 'Bash', args: { description: 'no command' }, kind: 'write', note: 'missing command fails closed' },
    {
      tool: 'Monitor',
      args: { description: 'errors in the app log', timeout_ms: 300000, command: 'grep ERROR /var/log/app.log' },
      kind: 'read',
      note: 'a monitored command is parsed like Bash',
    },
    {
      tool: 'Monitor',
      args: { description: 'deploy socket', timeout_ms: 300000, ws: { url: 'wss://example.test/events' } },
      kind: 'write',
      note: 'a WebSocket monitor has no command: fails closed',
    },
    {
      tool: 'PowerShell',
      args: { command: 'Get-ChildItem -Force' },
      kind: 'read',
      note: 'PowerShell is parsed as PowerShell: a read verb',
    },
    { tool: 'PowerShell', args: { command: 'Remove-Item -Recurse -Force C:\\repo' }, kind: 'write', note: 'a remove verb' },
    { tool: 'PowerShell', args: { command: 'Get-ChildItem $(rm x)' }, kind: 'write', note: 'a subexpression: fails closed' },
    { tool: 'PowerShell', args: {}, kind: 'write', note: 'no command: fails closed' },
  ]);
});

describe('claude-code: agents, tasks, the user and the web', () => {
  runRows('claude-code', [
    {
      tool: 'Agent',
      args: { description: 'Find auth code', prompt: 'Where is login handled?', subagent_type: 'Explore' },
      kind: 'write',
      note: 'a sub-agent can do anything',
    },
    {
      tool: 'Task',
      args: { description: 'Find auth code', prompt: 'Where is login handled?' },
      kind: 'write',
      note: 'former name of Agent',
    },
    { tool: 'Skill', args: { skill: 'pdf' }, kind: 'write', note: 'a skill may run a sub-agent' },
    { tool: 'SendMessage', args: { to: 'researcher', message: 'also check the tests' }, kind: 'write', note: 'instructs another agent' },
    {
      tool: 'TodoWrite',
      args: { todos: [{ content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' }] },
      kind: 'neutral',
      note: 'the todo list is a scratchpad',
    },
    {
      tool: 'TaskCreate',
      args: { subject: 'Add tests', description: 'Cover the parser' },
      kind: 'neutral',
      note: 'the task list is a todo list',
    },
    { tool: 'TaskStop', args: { task_id: 'bash_2' }, kind: 'write', note: 'stopping a process writes' },
    { tool: 'KillShell', args: { shell_id: 'bash_2' }, kind: 'write', note: 'former name of TaskStop' },
    { tool: 'BashOutput', args: { bash_id: 'bash_2' }, kind: 'read', note: "reads a background shell's output" },
    { tool: 'TaskOutput', args: { task_id: 'bash_2' }, kind: 'read', note: "reads a background task's output" },
    {
      tool: 'AskUserQuestion',
      args: {
        questions: [
          {
            question: 'Which database?',
            header: 'DB',
            multiSelect: false,
            options: [
              { label: 'Postgres', description: '' },
              { label: 'SQLite', description: '' },
            ],
          },
        ],
      },
      kind: 'user_input',
      note: 'asks the user',
    },
    { tool: 'ExitPlanMode', args: { plan: '1. Add tests\n2. Fix' }, kind: 'user_input', note: 'asks the user to approve the plan' },
    { tool: 'EnterPlanMode', args: {}, kind: 'neutral', note: 'a mode switch changes nothing outside' },
    {
      tool: 'WebFetch',
      args: { url: 'https://docs.example.test/api', prompt: 'List the endpoints' },
      kind: 'read',
      note: 'fetches a page',
    },
    { tool: 'WebSearch', args: { query: 'vitest 4 test.for' }, kind: 'read', note: 'searches the web' },
    { tool: 'CronList', args: {}, kind: 'resolve', note: 'lists scheduled prompts' },
    { tool: 'CronCreate', args: { cron: '*/10 * * * *', prompt: 'check the build' }, kind: 'write', note: 'schedules a prompt' },
    { tool: 'ListMcpResourcesTool', args: { server: 'github' }, kind: 'resolve', note: 'lists MCP resources' },
    {
      tool: 'ReadMcpResourceTool',
      args: { server: 'github', uri: 'repo://acme/app/README.md' },
      kind: 'read',
      note: 'reads an MCP resource',
    },
  ]);
});

describe('claude-code: keyed tools', () => {
  runRows('claude-code', [
    { tool: 'Artifact', args: { action: 'list', scope: 'mine' }, kind: 'resolve', targets: [], note: 'list discovers' },
    {
      tool: 'Artifact',
      args: { action: 'read', url: 'https://claude.ai/artifact/abc123' },
      kind: 'read',
      targets: ['url=https://claude.ai/artifact/abc123'],
      note: 'read names the artifact',
    },
    {
      tool: 'Artifact',
      args: { file_path: '/repo/report.html', title: 'Report' },
      kind: 'write',
      targets: ['?/url=<missing>'],
      note: 'no action means publish: a write; no url names its target, so an unknown place (refused until confirmed)',
    },
    {
      tool: 'Artifact',
      args: { action: 'read_asset', url: 'https://claude.ai/artifact/abc123', asset_id: 'f'.repeat(32) },
      kind: 'write',
      targets: ['url=https://claude.ai/artifact/abc123'],
      note: 'read_asset saves a local file',
    },
    {
      tool: 'RemoteTrigger',
      args: { action: 'run', trigger_id: 'trg_42' },
      kind: 'write',
      targets: ['trigger_id=trg_42'],
      note: 'running a trigger writes',
    },
    {
      tool: 'RemoteTrigger',
      args: { action: 'list_runs', trigger_id: 'trg_42' },
      kind: 'read',
      targets: ['trigger_id=trg_42'],
      note: 'its runs are read on the same target',
    },
    { tool: 'Projects', args: { method: 'project_search', query: 'pricing' }, kind: 'read', note: 'searching project knowledge reads' },
    {
      tool: 'Projects',
      args: { method: 'project_delete', path: 'claude/old-notes.md' },
      kind: 'write',
      note: 'deleting a project doc writes',
    },
    { tool: 'ClaudeDesign', args: { operation: 'list', arguments: {} }, kind: 'resolve', note: 'list discovers the operations' },
    {
      tool: 'ClaudeDesign',
      args: { operation: 'export_page', arguments: { id: 'p1' } },
      kind: 'write',
      note: 'any other operation fails closed',
    },
  ]);
});

describe('claude-code: names it does not list are writes', () => {
  runRows('claude-code', [
    {
      tool: 'mcp__github__create_issue',
      args: { owner: 'acme', repo: 'app', title: 'Bug' },
      kind: 'write',
      targets: ['?/mcp__github__create_issue <not in the catalog>'],
      note: 'an MCP tool is unknown',
    },
    {
      tool: 'mcp__github__get_issue',
      args: { owner: 'acme', repo: 'app', issue_number: 7 },
      kind: 'write',
      note: 'even with a read-looking name',
    },
    { tool: 'read', args: { file_path: '/repo/a.ts' }, kind: 'write', note: 'names are case-sensitive' },
  ]);
});

describe('gemini-cli: file tools name their paths (current and former arguments)', () => {
  runRows('gemini-cli', [
    {
      tool: 'read_file',
      args: { file_path: '/home/dev/app/src/main.py', start_line: 1, end_line: 80 },
      kind: 'read',
      targets: ['/home/dev/app/src/main.py'],
      note: 'reads a file',
    },
    {
      tool: 'read_file',
      args: { absolute_path: '/home/dev/app/README.md' },
      kind: 'read',
      targets: ['/home/dev/app/README.md'],
      note: 'former absolute_path argument',
    },
    {
      tool: 'read_many_files',
      args: { include: ['src/**/*.ts', 'README.md', 'docs/'] },
      kind: 'read',
      targets: ['README.md', 'docs', 'src/**/*.ts'],
      note: 'every include entry is a target',
    },
    {
      tool: 'read_many_files',
      args: { paths: ['/home/dev/app/a.py', '/home/dev/app/b.py'] },
      kind: 'read',
      targets: ['/home/dev/app/a.py', '/home/dev/app/b.py'],
      note: 'former paths argument',
    },
    {
      tool: 'list_directory',
      args: { dir_path: '/home/dev/app/src' },
      kind: 'resolve',
      targets: ['/home/dev/app/src'],
      note: 'lists a directory',
    },
    { tool: 'list_directory', args: { path: '/home/dev/app' }, kind: 'resolve', targets: ['/home/dev/app'], note: 'former path argument' },
    {
      tool: 'glob',
      args: { pattern: '**/*.py', dir_path: '/home/dev/app' },
      kind: 'resolve',
      targets: ['/home/dev/app'],
      note: 'finds files',
    },
    {
      tool: 'grep_search',
      args: { pattern: 'def main', dir_path: 'src', include_pattern: '*.py' },
      kind: 'read',
      targets: ['src'],
      note: 'searches contents; relative kept',
    },
    {
      tool: 'search_file_content',
      args: { pattern: 'TODO', path: '/home/dev/app/src' },
      kind: 'read',
      targets: ['/home/dev/app/src'],
      note: 'former name of grep_search',
    },
    {
      tool: 'write_file',
      args: { file_path: '/home/dev/app/config.yaml', content: 'port: 8080\n' },
      kind: 'write',
      targets: ['/home/dev/app/config.yaml'],
      note: 'writes a file',
    },
    {
      tool: 'replace',
      args: { file_path: '/home/dev/app/src/main.py', instruction: 'rename', old_string: 'foo', new_string: 'bar' },
      kind: 'write',
      targets: ['/home/dev/app/src/main.py'],
      note: 'edits a file',
    },
  ]);
});

describe('gemini-cli: run_shell_command is parsed in its dir_path', () => {
  runRows('gemini-cli', [
    { tool: 'run_shell_command', args: { command: 'ls -la', dir_path: '/home/dev/app' }, kind: 'read', note: 'ls reads' },
    {
      tool: 'run_shell_command',
      args: { command: 'cat src/app.py', dir_path: '/home/dev/app' },
      kind: 'read',
      someTargets: ['/home/dev/app/src/app.py'],
      note: 'operands made absolute against dir_path',
    },
    {
      tool: 'run_shell_command',
      args: { command: 'npm install', dir_path: '/home/dev/app', description: 'Install dependencies' },
      kind: 'write',
      note: 'npm install writes',
    },
    {
      tool: 'run_shell_command',
      args: { command: 'git push --force origin main' },
      kind: 'write',
      destructive: true,
      note: 'a forced push is destructive',
    },
    { tool: 'run_shell_command', args: { dir_path: '/home/dev/app' }, kind: 'write', note: 'missing command fails closed' },
  ]);
});

describe('gemini-cli: other tools', () => {
  runRows('gemini-cli', [
    { tool: 'save_memory', args: { fact: 'The user prefers tabs.' }, kind: 'write', note: 'appends to GEMINI.md' },
    {
      tool: 'write_todos',
      args: { todos: [{ description: 'Write tests', status: 'pending' }] },
      kind: 'neutral',
      note: 'the todo list is a scratchpad',
    },
    {
      tool: 'tracker_create_task',
      args: { title: 'Refactor', description: 'Split the module' },
      kind: 'neutral',
      note: 'the tracker is a todo list',
    },
    {
      tool: 'ask_user',
      args: { questions: [{ question: 'Deploy now?', header: 'Deploy', type: 'yesno' }] },
      kind: 'user_input',
      note: 'asks the user',
    },
    { tool: 'exit_plan_mode', args: { plan_filename: 'plan.md' }, kind: 'user_input', note: 'asks the user to approve the plan' },
    { tool: 'web_fetch', args: { prompt: 'Summarize https://example.test/changelog' }, kind: 'read', note: 'fetches pages' },
    { tool: 'google_web_search', args: { query: 'node 20 fetch timeout' }, kind: 'read', note: 'searches the web' },
    {
      tool: 'get_internal_docs',
      args: { path: 'cli/commands.md' },
      kind: 'read',
      targets: [],
      note: "Gemini CLI's docs are not a workspace path",
    },
    { tool: 'activate_skill', args: { name: 'pdf-tools' }, kind: 'neutral', note: 'loads instructions only' },
    { tool: 'list_background_processes', args: {}, kind: 'resolve', note: 'lists background shells' },
    { tool: 'read_background_output', args: { pid: 4242, lines: 50 }, kind: 'read', note: "reads a background shell's log" },
    {
      tool: 'invoke_agent',
      args: { agent_name: 'codebase_investigator', prompt: 'Map the auth flow' },
      kind: 'write',
      note: 'a sub-agent launcher fails closed',
    },
    {
      tool: 'codebase_investigator',
      args: { objective: 'Map the auth flow' },
      kind: 'write',
      note: 'so does a sub-agent exposed as a tool',
    },
    { tool: 'complete_task', args: { result: 'Done: tests pass.' }, kind: 'write', note: "a sub-agent's final result fails closed" },
    { tool: 'list_mcp_resources', args: { serverName: 'docs' }, kind: 'resolve', note: 'lists MCP resources' },
    { tool: 'read_mcp_resource', args: { uri: 'docs://guide/intro' }, kind: 'read', note: 'reads an MCP resource' },
    { tool: 'mcp_github_create_issue', args: { title: 'Bug' }, kind: 'write', note: 'an MCP tool is unknown' },
    { tool: 'discovered_tool_deploy', args: {}, kind: 'write', note: 'a discovered tool is unknown' },
  ]);
});

describe('codex: shell tools are parsed in their workdir', () => {
  runRows('codex', [
    { tool: 'shell', args: { command: ['bash', '-lc', 'ls'], workdir: '/repo' }, kind: 'read', note: 'bash -lc ls reads' },
    {
      tool: 'shell',
      args: { command: ['bash', '-lc', 'cat src/main.rs'], workdir: '/repo' },
      kind: 'read',
      someTargets: ['/repo/src/main.rs'],
      note: 'operands made absolute against workdir',
    },
    { tool: 'shell', args: { command: ['ls', '-la'], workdir: '/repo' }, kind: 'read', note: 'a bare argv is a command too' },
    {
      tool: 'shell',
      args: { command: ['bash', '-lc', 'rm -rf target'], workdir: '/repo' },
      kind: 'write',
      destructive: true,
      someTargets: ['/repo/target'],
      note: 'recursive removal is destructive',
    },
    {
      tool: 'shell',
      args: { command: ['apply_patch', '*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n'], workdir: '/repo' },
      kind: 'write',
      note: 'apply_patch through the shell writes',
    },
    { tool: 'shell', args: { workdir: '/repo' }, kind: 'write', note: 'missing command fails closed' },
    {
      tool: 'container.exec',
      args: { command: ['bash', '-lc', 'git status'], workdir: '/repo' },
      kind: 'read',
      note: 'former name of shell',
    },
    { tool: 'shell_command', args: { command: 'git log --oneline -5', workdir: '/repo' }, kind: 'read', note: 'a script string' },
    { tool: 'shell_command', args: { command: 'cargo build --release', workdir: '/repo' }, kind: 'write', note: 'a build writes' },
    {
      tool: 'exec_command',
      args: { cmd: 'cat -n src/lib.rs', workdir: '/repo', yield_time_ms: 1000 },
      kind: 'read',
      someTargets: ['/repo/src/lib.rs'],
      note: 'unified exec reads',
    },
    { tool: 'exec_command', args: { cmd: 'npm test', workdir: '/repo' }, kind: 'write', note: 'running tests is not read-only' },
  ]);
});

describe('codex: write_stdin polls or types', () => {
  runRows('codex', [
    { tool: 'write_stdin', args: { session_id: 3, chars: '', yield_time_ms: 2000 }, kind: 'read', note: 'empty input polls for output' },
    { tool: 'write_stdin', args: { session_id: 3, chars: 'y\n' }, kind: 'write', note: 'a keystroke can answer a prompt' },
    { tool: 'write_stdin', args: { session_id: 3 }, kind: 'write', note: 'missing input fails closed' },
  ]);
});

describe('codex: other tools', () => {
  runRows('codex', [
    {
      tool: 'apply_patch',
      args: { input: '*** Begin Patch\n*** Update File: /repo/src/a.rs\n@@\n-old\n+new\n*** End Patch\n' },
      kind: 'write',
      targets: ['/repo/src/a.rs'],
      note: 'JSON form: the patch names its file',
    },
    {
      tool: 'apply_patch',
      args: '*** Begin Patch\n*** Add File: /repo/hello.txt\n+hi\n*** End Patch\n',
      kind: 'write',
      targets: ['/repo/hello.txt'],
      note: 'freeform form (raw patch text)',
    },
    {
      tool: 'apply_patch',
      args: {
        command:
          '*** Begin Patch\n*** Update File: /repo/a.txt\n*** Move to: /repo/b.txt\n@@\n-x\n+*** Delete File: /etc/passwd\n*** Delete File: /repo/c.txt\n*** End Patch\n',
      },
      kind: 'write',
      targets: ['/repo/a.txt', '/repo/b.txt', '/repo/c.txt'],
      note: "the hooks' form: every header's file, the moved-to name too; a content line that looks like a header is content",
    },
    {
      tool: 'apply_patch',
      args: { command: 'rm -rf /' },
      kind: 'write',
      targets: ['?/command=<not a patch>'],
      note: 'a command that is not a patch is an unknown place',
    },
    { tool: 'apply_patch', args: {}, kind: 'write', targets: ['?/command|input=<missing>'], note: 'no patch: an unknown place' },
    { tool: 'Bash', args: { command: 'cat /repo/a.txt' }, kind: 'read', targets: ['/repo/a.txt'], note: "the hooks' shell tool: a read" },
    { tool: 'Bash', args: { command: 'rm /repo/a.txt' }, kind: 'write', targets: ['/repo/a.txt'], note: "the hooks' shell tool: a write" },
    {
      tool: 'update_plan',
      args: { plan: [{ step: 'Write tests', status: 'in_progress' }], explanation: 'start' },
      kind: 'neutral',
      note: 'the plan is a scratchpad',
    },
    {
      tool: 'view_image',
      args: { path: '/repo/docs/screenshot.png' },
      kind: 'read',
      targets: ['/repo/docs/screenshot.png'],
      note: 'views a local image',
    },
    { tool: 'list_dir', args: { dir_path: '/repo/src', depth: 2 }, kind: 'resolve', targets: ['/repo/src'], note: 'lists a directory' },
    {
      tool: 'read_file',
      args: { file_path: '/repo/src/lib.rs', offset: 1, limit: 200 },
      kind: 'read',
      targets: ['/repo/src/lib.rs'],
      note: 'experimental reader',
    },
    {
      tool: 'grep_files',
      args: { pattern: 'unsafe', path: '/repo/src', include: '*.rs' },
      kind: 'read',
      targets: ['/repo/src'],
      note: 'experimental search',
    },
    {
      tool: 'request_user_input',
      args: { questions: [{ id: 'db', header: 'DB', question: 'Which database?', options: [] }] },
      kind: 'user_input',
      note: 'asks the user',
    },
    { tool: 'web_search', args: { query: 'rust tokio select' }, kind: 'read', note: 'searches the web' },
    {
      tool: 'spawn_agent',
      args: { message: 'Review the diff', agent_type: 'reviewer' },
      kind: 'write',
      note: 'a sub-agent launcher fails closed',
    },
    { tool: 'wait_agent', args: { targets: ['agent-1'], timeout_ms: 30000 }, kind: 'read', note: "reads sub-agents' results" },
    { tool: 'list_agents', args: {}, kind: 'resolve', note: 'lists sub-agents' },
    { tool: 'close_agent', args: { target: 'agent-1' }, kind: 'write', note: 'shuts a sub-agent down' },
    {
      tool: 'exec',
      args: 'const r = await tools.shell({ command: ["ls"] }); text(r);',
      kind: 'write',
      note: 'code mode runs code that calls tools',
    },
    { tool: 'wait', args: { cell_id: '1', yield_time_ms: 1000 }, kind: 'read', note: "code mode reads a cell's output" },
    { tool: 'js_repl', args: 'fs.writeFileSync("x", "y")', kind: 'write', note: 'JavaScript can do anything' },
    { tool: 'update_goal', args: { status: 'complete' }, kind: 'neutral', note: 'goal bookkeeping' },
    {
      tool: 'request_plugin_install',
      args: { tool_type: 'connector', action_type: 'install', tool_id: 'gmail', suggest_reason: 'read mail' },
      kind: 'write',
      note: 'installs a plugin',
    },
    { tool: 'list_mcp_resources', args: { server: 'docs' }, kind: 'resolve', note: 'lists MCP resources' },
    { tool: 'read_mcp_resource', args: { server: 'docs', uri: 'docs://intro' }, kind: 'read', note: 'reads an MCP resource' },
    { tool: 'mcp__github__create_issue', args: { title: 'Bug' }, kind: 'write', note: 'an MCP tool is unknown' },
    { tool: 'github__create_issue', args: { title: 'Bug' }, kind: 'write', note: 'so is one in the former naming' },
  ]);
});

describe('mcp: tools are judged by the annotations their server declares', () => {
  const catalog = builtinCatalogs.mcp;
  const annotations = {
    search_issues: { title: 'Search issues', readOnlyHint: true },
    create_issue: { readOnlyHint: false, destructiveHint: false },
    delete_repo: { destructiveHint: true },
    get_me: {},
  };

  test('lists no tool of its own', () => {
    expect(Object.keys(catalog.tools)).toEqual([]);
  });

  test('a tool without annotations is a write', () => {
    expect(createCallClassifier(catalog)('search_issues', { q: 'bug' }).kind).toBe('write');
  });

  test('an untrusted server cannot make a tool a read', () => {
    expect(createCallClassifier(catalog, { annotations })('search_issues', { q: 'bug' })).toMatchObject({
      kind: 'write',
      destructive: true,
    });
  });

  test('a trusted readOnlyHint makes a read', () => {
    expect(createCallClassifier(catalog, { annotations, trusted: true })('search_issues', { q: 'bug' }).kind).toBe('read');
  });

  test('a trusted destructiveHint: false makes a write that is not destructive', () => {
    expect(createCallClassifier(catalog, { annotations, trusted: true })('create_issue', { title: 'x' })).toMatchObject({
      kind: 'write',
      destructive: false,
    });
  });

  test('a trusted tool that says nothing is a destructive write (the hints default to the worst)', () => {
    expect(createCallClassifier(catalog, { annotations, trusted: true })('get_me', {})).toMatchObject({ kind: 'write', destructive: true });
  });

  test('a trusted destructiveHint: true is a destructive write', () => {
    expect(createCallClassifier(catalog, { annotations, trusted: true })('delete_repo', { repo: 'acme/app' })).toMatchObject({
      kind: 'write',
      destructive: true,
    });
  });
});
