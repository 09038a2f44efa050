/**
 * An agent loop as an XState statechart that invokes the safety gate as a
 * child actor: every tool call and the final answer go through the gate,
 * and its decisions come back to the loop as `gate.decided` events (a
 * cleared block as `recovery.succeeded`). A scripted model plays the
 * conversation and the tools are in-memory, so it runs offline:
 *
 *   node --import ./test/visualizer/support/ts-register.mjs examples/parent-machine.ts
 *
 * In your app the model is a real one and the import is `pulse-safety-fsm`.
 * Run by test/examples/parent-machine.test.ts.
 */
import { assign, createActor, fromPromise, sendTo, setup } from 'xstate';
import { safetyMachine, type SafetyEmitted, type ToolKind } from '../src/index.js';

/** What the model does on its turn: call a tool, or give its final answer. */
type Turn = { tool: string; host: string } | { answer: string };

// The tools: which kind each is (the gate needs it), and what it does.
const tools: Record<string, { kind: ToolKind; run: (host: string) => Promise<string> }> = {
  get_status: { kind: 'read', run: async (host) => `${host}: running` },
  restart: { kind: 'write', run: async (host) => `${host}: restarted` },
};

// A scripted model: it restarts before looking, then claims success before checking.
const script: Turn[] = [
  { tool: 'restart', host: 'web-01' },
  { tool: 'get_status', host: 'web-01' },
  { tool: 'restart', host: 'web-01' },
  { answer: 'Restarted web-01.' },
  { tool: 'get_status', host: 'web-01' },
  { answer: 'web-01 was restarted and is running.' },
];

interface LoopContext {
  turn: number;
  /** The tool call in progress, with its id for the gate. */
  call: { id: string; tool: string; host: string } | null;
  /** What the model said last; the final answer once the gate allows it. */
  answer: string | null;
  refusals: number;
}

const agentLoop = setup({
  types: {
    context: {} as LoopContext,
    // The gate's events come in as the loop's own: `on: { 'gate.decided': ... }`, typed, no casts.
    events: {} as SafetyEmitted,
    output: {} as { answer: string | null; refusals: number },
  },
  actors: {
    safety: safetyMachine,
    runTool: fromPromise(async ({ input }: { input: { tool: string; host: string } }) => tools[input.tool]!.run(input.host)),
  },
  guards: {
    modelCallsTool: ({ context }) => context.turn < script.length && 'tool' in script[context.turn]!,
    modelAnswers: ({ context }) => context.turn < script.length && 'answer' in script[context.turn]!,
    isAllowed: ({ event }) => event.type === 'gate.decided' && event.allowed,
  },
  actions: {
    takeToolCall: assign(({ context }) => {
      const turn = script[context.turn] as { tool: string; host: string };
      return { call: { id: `c${context.turn}`, ...turn }, turn: context.turn + 1 };
    }),
    takeAnswer: assign(({ context }) => ({
      answer: (script[context.turn] as { answer: string }).answer,
      turn: context.turn + 1,
    })),
    countRefusal: assign(({ context }) => ({ refusals: context.refusals + 1 })),
    printRefusal: ({ context, event }) => {
      if (event.type !== 'gate.decided') return;
      const what = event.subject === 'tool' ? context.call!.tool : `answer "${context.answer}"`;
      console.log(`${what} -> refused: ${event.rule} in ${event.state}`);
    },
    printResult: ({ context }, params: { output: string }) => console.log(`${context.call!.tool} -> ${params.output}`),
    printRecovery: ({ event }) => {
      if (event.type === 'recovery.succeeded') {
        console.log(`  recovered: ${event.recovery.tool} (refused ${event.recovery.attempts} time(s) before)`);
      }
    },
    printAnswer: ({ context }) => console.log(`answer "${context.answer}" -> allowed`),
  },
}).createMachine({
  id: 'agentLoop',
  context: { turn: 0, call: null, answer: null, refusals: 0 },
  // The gate lives as long as the conversation; without `input` it completes verification by itself.
  invoke: { id: 'gate', src: 'safety' },
  initial: 'thinking',
  on: { 'recovery.succeeded': { actions: 'printRecovery' } },
  states: {
    thinking: {
      always: [
        { guard: 'modelCallsTool', target: 'checkingTool', actions: 'takeToolCall' },
        { guard: 'modelAnswers', target: 'checkingAnswer', actions: 'takeAnswer' },
        { target: 'done' },
      ],
    },
    checkingTool: {
      entry: sendTo('gate', ({ context }) => ({
        type: 'tool.requested' as const,
        callId: context.call!.id,
        tool: context.call!.tool,
        kind: tools[context.call!.tool]!.kind,
        at: Date.now(),
      })),
      on: {
        'gate.decided': [
          { guard: 'isAllowed', target: 'runningTool' },
          { target: 'thinking', actions: ['printRefusal', 'countRefusal'] }, // the model gets FSM_BLOCKED
        ],
      },
    },
    runningTool: {
      invoke: {
        src: 'runTool',
        input: ({ context }) => context.call!,
        onDone: {
          target: 'thinking',
          actions: [
            sendTo('gate', ({ context }) => ({
              type: 'tool.succeeded' as const,
              callId: context.call!.id,
              tool: context.call!.tool,
              kind: tools[context.call!.tool]!.kind,
              at: Date.now(),
            })),
            { type: 'printResult', params: ({ event }) => ({ output: String(event.output) }) },
          ],
        },
        onError: {
          target: 'thinking',
          actions: sendTo('gate', ({ context }) => ({
            type: 'tool.failed' as const,
            callId: context.call!.id,
            tool: context.call!.tool,
            kind: tools[context.call!.tool]!.kind,
            at: Date.now(),
          })),
        },
      },
    },
    checkingAnswer: {
      entry: sendTo('gate', () => ({ type: 'answer.requested' as const, at: Date.now() })),
      on: {
        'gate.decided': [
          { guard: 'isAllowed', target: 'done', actions: 'printAnswer' },
          { target: 'thinking', actions: ['printRefusal', 'countRefusal'] }, // the model is told to verify first
        ],
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({ answer: context.answer, refusals: context.refusals }),
});

const loop = createActor(agentLoop);
loop.subscribe({ complete: () => console.log(`done: ${loop.getSnapshot().output!.refusals} refusals`) });
loop.start();
