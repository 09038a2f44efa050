/**
 * The visualizer's server over HTTP (src/visualizer/server.ts): bound to
 * 127.0.0.1 on a free port, the page and its assets served locally, bad
 * input answered with a clear 4xx, a taken port reported clearly.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRun } from '../../src/audit/audit.js';
import { demoRuns } from '../../src/audit/demo.js';
import { PortInUseError, startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import type {
  CatalogFileResponse,
  PlaygroundCommandResponse,
  PlaygroundResponse,
  ReplayResponse,
  ReplayRunResponse,
} from '../../src/visualizer/protocol.js';

const incident = (name: string) => readFileSync(new URL(`../fixtures/incidents/${name}`, import.meta.url), 'utf8');

let server: VisualizerServer;
beforeAll(async () => {
  server = await startVisualizer({ port: 0 });
});
afterAll(async () => {
  await server.close();
});

function get(path: string): Promise<Response> {
  return fetch(new URL(path, server.url));
}

function post(path: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  return fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { 'Content-Type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('the visualizer server', () => {
  it('listens on 127.0.0.1 only', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
    expect(server.inspectUrl).toBe(`ws://127.0.0.1:${server.port}/inspect`);
  });

  it('serves a page that loads nothing from another origin', async () => {
    const response = await get('/');
    const html = await response.text();
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(html).toContain('<script type="module" src="/assets/main.js"></script>');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the page's script compiled from its TypeScript source", async () => {
    const response = await get('/assets/main.js');
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    const script = await response.text();
    expect(script).toContain("from './dom.js'");
    expect(script).not.toMatch(/^import type/m);
  });

  it('answers 404 for an asset that does not exist, without reading outside the page folder', async () => {
    expect((await get('/assets/nothing.js')).status).toBe(404);
    expect((await get('/assets/..%2Fserver.js')).status).toBe(404);
  });

  it('answers only requests addressed to 127.0.0.1 or localhost (no DNS rebinding)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/api/info', headers: { Host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('serves the chart of the safety machine as SVG rendered on the server', async () => {
    const chart = (await (await get('/api/charts/safety')).json()) as { svg: string; chart: { id: string } };
    expect(chart.chart.id).toBe('safety');
    expect(chart.svg).toContain('id="state:safety.VERIFYING"');
  });

  it('refuses a command body that is not JSON', async () => {
    const created = (await (await post('/api/playground', {})).json()) as { id: string };
    const response = await post(`/api/playground/${created.id}`, '{ not json');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/^the request body is not JSON/);
  });

  it('answers 400, not 500, for a path segment that is not valid percent-encoding', async () => {
    const response = await get('/api/replays/%E0%A4%A');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("the path segment '%E0%A4%A' is not valid percent-encoded UTF-8");
  });

  it('refuses call arguments nested too deep before the playground session sees them', async () => {
    const created = (await (await post('/api/playground', {})).json()) as PlaygroundResponse;
    const args = '['.repeat(5_000) + ']'.repeat(5_000);
    const response = await post(`/api/playground/${created.id}`, `{"type":"call","name":"get_user_details","args":${args}}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('the request body is nested more than 64 arrays or objects deep');
    const after = (await (await get(`/api/playground/${created.id}`)).json()) as PlaygroundResponse;
    expect(after.log).toEqual(created.log);
    expect(after.view).toEqual(created.view);
  });

  it('accepts call arguments nested as deep as the limit', async () => {
    const created = (await (await post('/api/playground', {})).json()) as PlaygroundResponse;
    const args = '['.repeat(63) + ']'.repeat(63);
    const response = await post(`/api/playground/${created.id}`, `{"type":"call","name":"get_user_details","args":${args}}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as PlaygroundCommandResponse).entry.label).toMatch(/^check c1 get_user_details \[\[/);
  });

  it('refuses a body sent as a form, so another site cannot post to it', async () => {
    const response = await post('/api/playground', 'catalog=pulse', 'application/x-www-form-urlencoded');
    expect(response.status).toBe(415);
  });

  it('refuses a transcript it cannot read, naming the source and position', async () => {
    const response = await post('/api/replays', { text: '{"type":"call"}\n{oops', source: 'broken.jsonl' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/^broken\.jsonl: line /);
  });

  it('replays the embedded demo with the refusals the audit reports', async () => {
    const summary = (await (await get('/api/replays/demo')).json()) as ReplayResponse;
    const audit = auditRun(demoRuns()[0]!);
    expect(summary.runs).toEqual([expect.objectContaining({ index: 0, refusals: audit.refusals.length })]);
    const run = (await (await get('/api/replays/demo/runs/0')).json()) as ReplayRunResponse;
    expect(run.refusedSteps).toEqual(audit.refusals.map((r) => r.index));
    expect(run.frames.at(-1)!.view.state).toBe(audit.finalState);
  });

  it('replays a Claude Code session as pulse-safety audit does by default: catalog auto, its shell commands parsed, the target rules (issue 27 item 1)', async () => {
    const response = await post('/api/replays', { text: incident('01b-claude-code-ls-then-rm-home.jsonl'), source: '01b.jsonl' });
    expect(response.status).toBe(201);
    const summary = (await response.json()) as ReplayResponse;
    expect(summary.settings).toEqual({ catalog: 'auto', policy: 'full', strictFailedWrites: false });
    expect(summary.catalogChoice).toBe("auto: claude-code, the log's format, knows 1 of 1 tool names");
    // `ls -la` is a read (the shell parser is loaded by the server itself); the `rm -rf ... ~/` after it is refused for its target.
    expect(summary.refusals[0]).toMatchObject({ run: 0, step: 2, subject: 'tool', tool: 'Bash', rule: 'unknown-target' });
    const run = (await (await get(`/api/replays/${summary.id}/runs/0?catalog=auto`)).json()) as ReplayRunResponse;
    expect(run.frames[0]!.entry.decision).toMatchObject({ allowed: true, kind: 'read' });
    expect(run.refusedSteps[0]).toBe(2);
  });

  it('replays with a catalog file opened through the API, and refuses one that does not validate, or a catalog it does not know', async () => {
    const bad = await post('/api/catalogs', { text: JSON.stringify({ name: 'bad', tools: { a: 'sometimes' } }), source: 'bad.json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^catalog bad\.json: tools\.a: /);
    const opened = await post('/api/catalogs', { text: incident('sql.catalog.json'), source: 'sql.catalog.json' });
    expect(opened.status).toBe(201);
    const catalog = (await opened.json()) as CatalogFileResponse;
    expect(catalog).toMatchObject({ id: expect.stringMatching(/^f\d+$/), source: 'sql.catalog.json' });
    const text = incident('10b-legacy-function-call-drop.json');
    const withFile = (await (await post('/api/replays', { text, source: '10b.json', catalog: catalog.id })).json()) as ReplayResponse;
    expect(withFile).toMatchObject({ catalogName: catalog.name, catalogChoice: 'sql.catalog.json' });
    expect(withFile.refusalCount).toBeGreaterThan(0);
    const unknown = await get(`/api/replays/${withFile.id}?catalog=f999`);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/^unknown catalog 'f999'/);
  });

  it('reports a taken port clearly', async () => {
    const error = await startVisualizer({ port: server.port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortInUseError);
    expect((error as Error).message).toBe(
      `port ${server.port} on 127.0.0.1 is already in use; stop the program using it, or choose another port with --port <n> (--port 0 picks any free port)`,
    );
  });
});
