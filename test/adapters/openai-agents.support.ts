/**
 * What the OpenAI Agents JS adapter tests of issue #26 share: a files agent
 * (a listing and a delete that name their targets, `path`) on the real
 * `@openai/agents` runner, played by the SDK's own `ScriptedModel`.
 */
import { Agent, setTracingDisabled, type AgentInputItem, type RunStreamEvent } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing';
import { z } from 'zod';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { createSafetyGate, type AgentsSafetyGate, type AgentsSafetyOptions } from '../../src/adapters/openai-agents.js';

setTracingDisabled(true);

import { filesCatalog } from '../fixtures/files-catalog.js';

export { filesCatalog };

/** One step of the scripted model: the items of one response. */
export type Step = (ReturnType<typeof functionCall> | ReturnType<typeof assistantMessage>)[];

/** `list_files` of a directory, as call `callId`. */
export const list = (path: string, callId: string): Step => [functionCall('list_files', { path }, { callId })];

/** `delete_file` of a path, as call `callId`. */
export const remove = (path: string, callId: string): Step => [functionCall('delete_file', { path }, { callId })];

/** An answer. */
export const answer = (text: string): Step => [assistantMessage(text)];

/** A session guard on a clock of its own (epoch ms). */
export function guardWithClock(options: Parameters<typeof createSessionGuard>[0] = {}): SessionGuard {
  let t = 1_000;
  return createSessionGuard({ now: () => (t += 1), ...options });
}

/** How the files tools behave: `approval` is the delete's `needsApproval`. */
export interface FilesBehaviour {
  approval?: boolean | ((context: unknown, input: unknown) => Promise<boolean>);
}

/** The files agent with a gate: what ran is logged (`list_files other`, `delete_file notes/a.txt`). */
export function filesAgent<TContext = unknown>(
  script: Step[],
  options: Partial<AgentsSafetyOptions<TContext>> = {},
  behaviour: FilesBehaviour = {},
) {
  const log: string[] = [];
  const guard = options.guard ?? (options.getGuard === undefined ? guardWithClock() : undefined);
  const gate = createSafetyGate<TContext>({ catalog: filesCatalog, ...options, ...(guard === undefined ? {} : { guard }) });
  const path = z.object({ path: z.string() });
  const tools = (gate as AgentsSafetyGate).tools([
    {
      name: 'list_files',
      description: 'List the files of a directory',
      parameters: path,
      execute: async ({ path }: { path: string }) => {
        log.push(`list_files ${path}`);
        return `${path}: a.txt b.txt`;
      },
    },
    {
      name: 'delete_file',
      description: 'Delete a file',
      parameters: path,
      execute: async ({ path }: { path: string }) => {
        log.push(`delete_file ${path}`);
        return `deleted ${path}`;
      },
      ...(behaviour.approval === undefined ? {} : { needsApproval: behaviour.approval as never }),
    },
  ]);
  const model = new ScriptedModel(script);
  const agent = new Agent<TContext>({
    name: 'files',
    model,
    tools,
    inputGuardrails: [gate.inputGuardrail],
    outputGuardrails: [gate.outputGuardrail],
  });
  return { log, guard: guard as SessionGuard, gate, model, agent };
}

/** The output the model got for a call, from a later model input. */
export function outputFor(input: string | AgentInputItem[], callId: string): string | undefined {
  if (typeof input === 'string') return undefined;
  for (const item of input) {
    if (item.type === 'function_call_result' && item.callId === callId) return JSON.stringify(item.output);
  }
  return undefined;
}

/** The text of a stream's released `output_text_delta` events. */
export function textOf(events: readonly RunStreamEvent[]): string {
  return events
    .map((event) => (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta' ? event.data.delta : ''))
    .join('');
}

/** Reads a stream to its end: its events, and what it threw (undefined when it ended well). */
export async function drain(stream: AsyncIterable<RunStreamEvent>): Promise<{ events: RunStreamEvent[]; thrown: unknown }> {
  const events: RunStreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, thrown: undefined };
  } catch (thrown) {
    return { events, thrown };
  }
}
